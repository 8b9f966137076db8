#!/usr/bin/env python3
"""The option tables against everything made from them: --help, `gpuvet help`, the man
pages, the bash and zsh completions, and the parser itself.

    test_cli_tables.py GPUVET MAN_DIR BASH_COMPLETION ZSH_COMPLETION

A command's options live in one typed table (src/cmd/options.h); this test fails when an
option is in the table and missing from one of the things generated from it, when the
parser refuses an option its table lists, when a help line is wider than 80 columns, or
when a man page does not render cleanly with man(1).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

GPUVET, MAN_DIR, BASH_FILE, ZSH_FILE = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def run(args, **kw):
    return subprocess.run([GPUVET] + args, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, **kw)


def width(line):
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


# Values each kind accepts, for the parser test; text kinds get a word their handlers take.
SAMPLES = {
    "file": "/dev/null", "output": "-", "out-file": "/tmp/gpuvet-cli-tables.out", "dir": "/",
    "program": "sh", "duration": None, "size": None, "number": None, "text": "x", "list": "0",
    "host": "127.0.0.1", "enum": None,
}
# Options whose handler checks a text value further: a value it takes.
SAMPLE_OVERRIDES = {
    ("check", "probe-timeout"): "30s", ("check", "only"): "cpu", ("tune", "set"): "vm.swappiness=1",
    ("tune", "profile"): "throughput", ("bench nccl", "minbytes"): "8", ("bench nccl", "maxbytes"): "64K",
    ("bench nccl", "stepbytes"): "1M", ("estimate", "params"): "7B", ("estimate", "mfu"): "0.5",
    ("estimate", "tokens"): "300B",
}


def sample(spec, o):
    if (spec["name"], o["name"]) in SAMPLE_OVERRIDES:
        return SAMPLE_OVERRIDES[(spec["name"], o["name"])]
    if o["choices"]:
        return o["choices"][0]
    return SAMPLES[o["kind"]]


def command_words(spec):
    words = spec["name"].split()
    if spec["name"] == "tune":
        words.append("plan")  # tune's options come after its action
    return words


def main():
    r = run(["help", "--options-json"])
    if r.returncode != 0:
        sys.exit("gpuvet help --options-json: exit %d: %s" % (r.returncode, r.stderr))
    doc = json.loads(r.stdout)
    specs = doc["specs"]
    top = [c["name"] for c in doc["commands"] if c["name"] != "help"]

    # every command has a table, and every table a command
    for name in top:
        if not any(s["name"] == name or s["name"].startswith(name + " ") for s in specs):
            fail("command %s has no option table (spec)" % name)
    for s in specs:
        if s["name"].split()[0] not in top:
            fail("spec %r belongs to no command of `gpuvet --help`" % s["name"])

    bash_lists, bash_values = bash_completions(specs)
    zsh_text = ZSH_FILE.read_text()
    zsh = shutil.which("zsh")
    if zsh:
        z = subprocess.run([zsh, "-n", str(ZSH_FILE)], capture_output=True, text=True, timeout=60)
        if z.returncode != 0:
            fail("zsh -n %s: %s" % (ZSH_FILE, z.stderr.strip()))
    else:
        print("note: no zsh here; the zsh completion's syntax is not checked")

    for s in specs:
        words = command_words(s)
        name = s["name"]
        h = run(words + ["--help"])
        if h.returncode != 0:
            fail("%s --help: exit %d: %s" % (name, h.returncode, h.stderr.strip()))
            continue
        for line in h.stdout.splitlines():
            if width(line) > 80:
                fail("%s --help: a line of %d columns: %r" % (name, width(line), line))
        viahelp = run(["help"] + s["name"].split())
        if viahelp.stdout != h.stdout:
            fail("gpuvet help %s differs from gpuvet %s --help" % (name, name))

        page = MAN_DIR / ("gpuvet-%s.1" % name.replace(" ", "-"))
        man_text = page.read_text() if page.exists() else None
        if man_text is None:
            fail("no man page %s" % page.name)
        else:
            check_man(page)

        for o in s["options"]:
            long = "--" + o["name"]
            shown = ("-%s, %s" % (o["letter"], long)) if o["letter"] else long
            if not re.search(r"(^|\s)%s(\s|$)" % re.escape(shown), h.stdout, re.M):
                fail("%s --help does not show %s" % (name, shown))
            if man_text is not None and ("\\-\\-" + o["name"].replace("-", "\\-")) not in man_text:
                fail("man page %s does not show %s" % (page.name, long))
            if long not in bash_lists.get(name, set()):
                fail("bash completion of `gpuvet %s -` does not offer %s" % (name, long))
            if o["letter"] and "-" + o["letter"] not in bash_lists.get(name, set()):
                fail("bash completion of `gpuvet %s -` does not offer -%s" % (name, o["letter"]))
            if o["kind"] == "enum" and bash_values.get((name, long)) != set(o["choices"]):
                fail("bash completion of `gpuvet %s %s ` gives %s, not %s" % (name, long,
                     sorted(bash_values.get((name, long), [])), o["choices"]))
            if "'" + long not in zsh_text and "," + long not in zsh_text:
                fail("zsh completion of %s lacks %s" % (name, long))
            check_parser(s, o, words)
        extra = bash_lists.get(name, set()) - {"--" + o["name"] for o in s["options"]} - \
            {"-" + o["letter"] for o in s["options"] if o["letter"]}
        if extra:
            fail("bash completion of `gpuvet %s -` offers options not in its table: %s" % (name, sorted(extra)))

    listed = {p.name for p in MAN_DIR.glob("*.1")}
    wanted = {"gpuvet.1"} | {"gpuvet-%s.1" % s["name"].replace(" ", "-") for s in specs}
    if listed != wanted:
        fail("man pages %s, but commands %s" % (sorted(listed - wanted), sorted(wanted - listed)))
    check_man(MAN_DIR / "gpuvet.1")

    if failures:
        print("%d failure(s)" % len(failures))
        sys.exit(1)
    print("ok: %d commands, %d options: help, man pages, bash and zsh completion, parser"
          % (len(specs), sum(len(s["options"]) for s in specs)))


def check_parser(s, o, words):
    """The parser takes every option of the table (--help after it stops before any work)."""
    args = words + ["--" + o["name"]]
    if o["kind"] != "flag":
        value = sample(s, o)
        if value is None:  # a number, duration or size: the table's lower bound, in its unit
            low = o["min"] or 0
            value = {"duration": "%dms" % low if low else "0", "size": str(max(low, 1)), "number": str(low)}[o["kind"]]
        args.append(value)
    if o["name"] == "help":
        args = words + ["--help"]
    else:
        args.append("--help")
    if s["name"] in ("query", "policy validate"):
        return  # their own parsers: test_query_options (unit) and golden_policy cover them
    r = run(args)
    if r.returncode != 0:
        fail("`gpuvet %s` refused an option of its table: exit %d: %s"
             % (" ".join(args), r.returncode, r.stderr.strip()))


def check_man(page):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="0")
    man = shutil.which("man")
    if not man:
        fail("no man(1) to render %s (apt-get install man-db)" % page.name)
        return
    r = subprocess.run([man, "--warnings", "-E", "UTF-8", "-l", str(page)], capture_output=True, text=True,
                       timeout=60, env=env)
    if r.returncode != 0 or r.stderr.strip():
        fail("man -l %s: exit %d: %s" % (page.name, r.returncode, r.stderr.strip()[:400]))
    for line in r.stdout.splitlines():
        line = re.sub(".\x08", "", line)  # bold and underline as overstrikes
        if width(line) > 80:
            fail("man %s at 80 columns: a line of %d: %r" % (page.name, width(line), line))


def bash_completions(specs):
    """What bash completes, run for real: `gpuvet SPEC -` and `gpuvet SPEC --enum-option `."""
    script = ["source %s" % BASH_FILE,
              't() { COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); COMPREPLY=(); _gpuvet; '
              'printf "%s\\t" "$*"; printf "%s " "${COMPREPLY[@]}"; printf "\\n"; }']
    queries = []
    for s in specs:
        words = ["gpuvet"] + command_words(s)
        queries.append(("list", s["name"], None, words + ["-"]))
        for o in s["options"]:
            if o["choices"] and o["kind"] == "enum":
                queries.append(("values", s["name"], "--" + o["name"], words + ["--" + o["name"], ""]))
    for _, _, _, w in queries:
        script.append("t " + " ".join("'%s'" % x for x in w))
    r = subprocess.run(["bash", "-c", "\n".join(script)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        fail("bash completion script: exit %d: %s" % (r.returncode, r.stderr.strip()))
    lines = r.stdout.splitlines()
    lists, values = {}, {}
    for (what, name, opt, _), line in zip(queries, lines):
        got = set(line.split("\t", 1)[1].split()) if "\t" in line else set()
        if what == "list":
            lists[name] = got
        else:
            values[(name, opt)] = got
    if len(lines) != len(queries):
        fail("bash completion answered %d of %d queries: %s" % (len(lines), len(queries), r.stderr.strip()))
    return lists, values


if __name__ == "__main__":
    main()
