#!/usr/bin/env python3
"""Write gpuvet's man pages from its option tables.

    gen-manpages.py OPTIONS_JSON OUTDIR [PAGE...]

OPTIONS_JSON is `gpuvet help --options-json`: every command's typed option table, summary,
notes and exit status, the same data `--help` prints. One page per command (gpuvet-check.1,
gpuvet-bench-nccl.1 ...) and gpuvet.1 listing them. When PAGE names are given (meson lists
the pages it installs), the set written must be exactly those: a command added without its
page, or a page whose command is gone, fails the build.
"""
import json
import re
import sys
from pathlib import Path


def roff(text):
    """Text as roff: backslashes and leading dots/quotes escaped, `code` in bold."""
    text = text.replace("\\", "\\e")
    text = text.replace("-", "\\-")
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    lines = []
    for line in text.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def paragraphs(text):
    """Paragraphs as the help printer splits them; one starting with a space is kept as written."""
    out = []
    for para in re.split(r"\n\n+", text or ""):
        if not para:
            continue
        if para.startswith(" "):
            out.append(".PP\n.nf\n" + roff(para) + "\n.fi")
        else:
            out.append(".PP\n" + roff(" ".join(para.split())))
    return "\n".join(out)


def option_item(o):
    names = []
    if o["letter"]:
        names.append("\\fB\\-%s\\fR" % o["letter"])
    names.append("\\fB\\-\\-%s\\fR" % roff(o["name"]))
    head = ", ".join(names)
    if o["metavar"]:
        head += " \\fI%s\\fR" % roff(o["metavar"])
    text = o["help"]
    if o["default"]:
        text += " (default: %s)" % o["default"]
    if o["kind"] == "enum" and o["choices"]:
        text += " One of: %s." % ", ".join(o["choices"])
    return ".TP\n%s\n%s" % (head, roff(" ".join(text.split())))


def page_name(spec_name):
    return "gpuvet-" + spec_name.replace(" ", "-")


def header(name, version, section_title):
    return '.TH %s 1 "" "gpuvet %s" "%s"' % (name.upper(), version, section_title)


def brief(spec, doc):
    """One line for NAME: the command list's, else the summary's first sentence, cut at a word."""
    for c in doc["commands"]:
        if c["name"] == spec["name"]:
            return c["summary"]
    text = first_sentence(spec["summary"])
    return text if len(text) <= 64 else text[:61].rsplit(" ", 1)[0] + "..."


def command_page(spec, doc, all_names):
    version = doc["version"]
    name = page_name(spec["name"])
    parts = [header(name, version, "gpuvet manual"), ".SH NAME", "%s \\- %s" % (name, roff(brief(spec, doc)))]
    parts.append(".SH SYNOPSIS")
    for line in spec["synopsis"].split("\n"):
        parts.append(".B gpuvet %s\n%s\n.br" % (roff(spec["name"]), roff(line)))
    parts.append(".SH DESCRIPTION")
    parts.append(paragraphs(spec["summary"]))
    if spec["description"]:
        parts.append(paragraphs(spec["description"]))
    sections = [("own", "OPTIONS"), ("output", "OUTPUT OPTIONS"), ("nvml", "NVML OPTIONS"), ("common", "COMMON OPTIONS")]
    for fragment, title in sections:
        opts = [o for o in spec["options"] if o["fragment"] == fragment]
        if opts:
            parts.append(".SH " + title)
            parts.extend(option_item(o) for o in opts)
    if spec["notes"]:
        parts.append(".SH NOTES")
        parts.append(paragraphs(spec["notes"]))
    if spec["exit_status"]:
        parts.append(".SH EXIT STATUS")
        parts.append(paragraphs(spec["exit_status"]))
    parts.append(".SH SEE ALSO")
    related = [n for n in all_names if n != name and n.startswith(name.rsplit("-", 1)[0] + "-")]
    refs = ["\\fBgpuvet\\fR(1)"] + ["\\fB%s\\fR(1)" % roff(n) for n in related[:6]]
    parts.append(",\n".join(refs) + "; the documentation in /usr/share/doc/gpuvet.")
    return "\n".join(parts) + "\n"


def first_sentence(text):
    text = " ".join(text.split())
    m = re.match(r"(.+?[.:])(\s|$)", text)
    sentence = m.group(1) if m else text
    return sentence.rstrip(".:")


def main_page(doc, version):
    parts = [header("gpuvet", version, "gpuvet manual"), ".SH NAME",
             "gpuvet \\- discover, check, benchmark, stress and monitor NVIDIA GPU servers",
             ".SH SYNOPSIS", ".B gpuvet\n\\fICOMMAND\\fR [\\fIOPTIONS\\fR]", ".SH DESCRIPTION",
             ".PP\nOne binary for GPU nodes: bare metal, passthrough hosts, their VMs and cloud instances. "
             "\\fBgpuvet check\\fR gives one verdict for the node with a remedy for every problem.",
             ".SH COMMANDS"]
    for c in doc["commands"]:
        parts.append(".TP\n\\fB%s\\fR\n%s" % (roff(c["name"]), roff(c["summary"])))
    parts.append(".SH OPTIONS\n.TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthe list of commands\n"
                 ".TP\n\\fB\\-V\\fR, \\fB\\-\\-version\\fR\nthe version and the data tables in use (also: \\fBgpuvet version\\fR)")
    parts.append(".SH EXIT STATUS\n.PP\n0 pass, 1 a check failed, 2 usage or bad input, 3 internal error.")
    parts.append(".SH SEE ALSO")
    parts.append(",\n".join("\\fB%s\\fR(1)" % roff(page_name(s["name"])) for s in doc["specs"]))
    return "\n".join(parts) + "\n"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    doc = json.loads(Path(sys.argv[1]).read_text())
    if doc.get("schema") != "gpuvet.options/1":
        sys.exit("%s: not gpuvet's option tables (schema %r)" % (sys.argv[1], doc.get("schema")))
    out = Path(sys.argv[2])
    version = doc["version"]
    pages = {"gpuvet.1": main_page(doc, version)}
    names = [page_name(s["name"]) for s in doc["specs"]]
    for spec in doc["specs"]:
        pages[page_name(spec["name"]) + ".1"] = command_page(spec, doc, names)
    wanted = set(Path(p).name for p in sys.argv[3:])
    if wanted and wanted != set(pages):
        missing, extra = sorted(set(pages) - wanted), sorted(wanted - set(pages))
        sys.exit("gen-manpages: meson's list of man pages differs from the commands: "
                 "not listed %s, no command for %s" % (missing, extra))
    out.mkdir(parents=True, exist_ok=True)
    for name, text in pages.items():
        (out / name).write_text(text)


if __name__ == "__main__":
    main()
