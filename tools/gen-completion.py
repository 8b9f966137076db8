#!/usr/bin/env python3
"""Write gpuvet's bash and zsh completions from its option tables.

    gen-completion.py OPTIONS_JSON BASH_FILE ZSH_FILE

OPTIONS_JSON is `gpuvet help --options-json`. Commands, subcommands, every option of each,
the values of enumerated options, files for file options and the operand words come from
the tables, so a completion cannot offer an option the parser refuses or miss one it takes.
"""
import json
import re
import sys
from pathlib import Path

FILE_KINDS = {"file", "output", "out-file"}


def value_kind(o):
    """What an option's value is, for either shell: file, dir, program, words or none."""
    if o["kind"] in FILE_KINDS:
        return "file"
    if o["kind"] in ("dir", "program"):
        return o["kind"]
    return "words" if o["choices"] else "none"


def groups(doc):
    """Command -> its subcommands ("bench" -> ["nccl", "rdma", "train"])."""
    out = {}
    for spec in doc["specs"]:
        if " " in spec["name"]:
            parent, sub = spec["name"].split(" ", 1)
            out.setdefault(parent, []).append(sub)
    return out


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def bash(doc):
    subs = groups(doc)
    lines = [
        "# bash completion for gpuvet, generated from its option tables by tools/gen-completion.py",
        "# (do not edit: change the command's table in src/cmd/ and rebuild).",
        "",
    ]
    lines.append("_gpuvet_commands=%s" % sh_quote(" ".join(c["name"] for c in doc["commands"])))
    lines.append("declare -gA _gpuvet_subcommands=(")
    for parent, children in sorted(subs.items()):
        lines.append("    [%s]=%s" % (parent, sh_quote(" ".join(children))))
    lines.append(")")
    lines.append("declare -gA _gpuvet_options=(")
    for spec in doc["specs"]:
        words = []
        for o in spec["options"]:
            words.append("--" + o["name"])
            if o["letter"]:
                words.append("-" + o["letter"])
        lines.append("    [%s]=%s" % (sh_quote(spec["name"]), sh_quote(" ".join(words))))
    lines.append(")")
    # "SPEC OPTION" -> what its value is: file, dir, program, none, or "words:a b c"
    lines.append("declare -gA _gpuvet_values=(")
    for spec in doc["specs"]:
        for o in spec["options"]:
            if o["kind"] == "flag":
                continue
            what = value_kind(o)
            if what == "words":
                what = "words:" + " ".join(o["choices"])
            if o["kind"] == "output":
                what = "output"  # optional value: the next word may be an option
            for spelling in ["--" + o["name"]] + (["-" + o["letter"]] if o["letter"] else []):
                lines.append("    [%s]=%s" % (sh_quote(spec["name"] + " " + spelling), sh_quote(what)))
    lines.append(")")
    lines.append("declare -gA _gpuvet_operands=(")
    for spec in doc["specs"]:
        if spec["operands"]:
            what = "words:" + " ".join(spec["operands"])
        elif spec["takes_operands"]:
            what = "file"
        else:
            continue
        lines.append("    [%s]=%s" % (sh_quote(spec["name"]), sh_quote(what)))
    lines.append(")")
    lines.append(r'''
_gpuvet_complete_value() {
    local what=$1 cur=$2
    case $what in
        file|output) COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
        dir) COMPREPLY=($(compgen -d -- "$cur")); compopt -o filenames 2>/dev/null ;;
        program) COMPREPLY=($(compgen -c -- "$cur")) ;;
        words:*) COMPREPLY=($(compgen -W "${what#words:}" -- "$cur")) ;;
        *) COMPREPLY=() ;;
    esac
}

_gpuvet() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "$_gpuvet_commands --help --version" -- "$cur"))
        return
    fi
    local spec=${COMP_WORDS[1]}
    if [[ $spec == help ]]; then
        COMPREPLY=($(compgen -W "$_gpuvet_commands" -- "$cur"))
        return
    fi
    local children=${_gpuvet_subcommands[$spec]}
    if [[ -n $children ]]; then
        if ((COMP_CWORD == 2)) && [[ $cur != -* ]]; then
            local operands=${_gpuvet_operands[$spec]} extra=""
            [[ $operands == words:* ]] && extra=${operands#words:}
            COMPREPLY=($(compgen -W "$children $extra" -- "$cur"))
            return
        fi
        local w
        for w in $children; do
            if [[ ${COMP_WORDS[2]} == "$w" ]]; then
                spec="$spec $w"
                break
            fi
        done
    fi
    [[ -n ${_gpuvet_options[$spec]+set} ]] || return
    # --option=value
    if [[ $cur == --*=* ]]; then
        local what=${_gpuvet_values["$spec ${cur%%=*}"]}
        [[ -n $what ]] && _gpuvet_complete_value "$what" "${cur#*=}"
        return
    fi
    # the value of the option before
    local what=${_gpuvet_values["$spec $prev"]}
    if [[ -n $what && ($what != output || $cur != -*) ]]; then
        _gpuvet_complete_value "$what" "$cur"
        [[ $what == output ]] && COMPREPLY+=($(compgen -W "-" -- "$cur"))
        return
    fi
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "${_gpuvet_options[$spec]}" -- "$cur"))
        return
    fi
    local operands=${_gpuvet_operands[$spec]}
    # tune's action is its first operand only
    if [[ -n $operands ]]; then
        _gpuvet_complete_value "$operands" "$cur"
    fi
}
complete -F _gpuvet gpuvet
''')
    return "\n".join(lines)


def zsh_escape(text):
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:").replace("'", "'\\''")


def short_help(text):
    text = " ".join(text.split())
    text = re.sub(r"`([^`]*)`", r"\1", text)
    return text if len(text) <= 70 else text[:67].rsplit(" ", 1)[0] + "..."


def zsh_option(o):
    desc = zsh_escape(short_help(o["help"]))
    if o["kind"] == "flag":
        value = ""
    else:
        action = {"file": "_files", "dir": "_files -/", "program": "_command_names -e",
                  "words": "(" + " ".join(o["choices"]) + ")", "none": " "}[value_kind(o)]
        meta = zsh_escape(o["metavar"] or "value")
        value = (":" if o["kind"] == "output" else "") + ":" + meta + ":" + action
    long_form = "--" + o["name"] + ("" if o["kind"] == "flag" else "=")
    if o["letter"]:
        short = "-" + o["letter"] + ("" if o["kind"] == "flag" else "+")
        return "'(-%s --%s)'{%s,%s}'[%s]%s'" % (o["letter"], o["name"], short, long_form, desc, value)
    return "'%s[%s]%s'" % (long_form, desc, value)


def zsh(doc):
    subs = groups(doc)
    out = [
        "#compdef gpuvet",
        "# zsh completion for gpuvet, generated from its option tables by tools/gen-completion.py",
        "# (do not edit: change the command's table in src/cmd/ and rebuild).",
        "",
        "_gpuvet() {",
        "    local -a commands",
        "    commands=(",
    ]
    for c in doc["commands"]:
        out.append("        '%s:%s'" % (c["name"], zsh_escape(c["summary"])))
    out.append("    )")
    out.append("    if (( CURRENT == 2 )); then")
    out.append("        _describe -t commands 'gpuvet command' commands")
    out.append("        return")
    out.append("    fi")
    out.append("    local spec=${words[2]}")
    out.append("    shift words; (( CURRENT-- ))")
    out.append("    if [[ $spec == help ]]; then _describe -t commands 'gpuvet command' commands; return; fi")
    out.append("    case $spec in")
    for parent, children in sorted(subs.items()):
        out.append("        %s)" % parent)
        out.append("            if (( CURRENT == 2 )) && [[ ${words[CURRENT]} != -* ]]; then")
        out.append("                local -a subs; subs=(%s)" % " ".join(children))
        out.append("                _describe -t subcommands '%s subcommand' subs" % parent)
        if not any(s["name"] == parent for s in doc["specs"]):
            out.append("                return")
        out.append("            fi")
        out.append("            case ${words[2]} in")
        out.append("                (%s) spec=\"$spec ${words[2]}\"; shift words; (( CURRENT-- )) ;;" % "|".join(children))
        out.append("            esac ;;")
    out.append("    esac")
    out.append("    case $spec in")
    for spec in doc["specs"]:
        args = [zsh_option(o) for o in spec["options"]]
        if spec["operands"]:
            args.append("'*:operand:(%s)'" % " ".join(spec["operands"]))
        elif spec["takes_operands"]:
            args.append("'*:file:_files'")
        out.append("        %s)" % sh_quote(spec["name"]))
        out.append("            _arguments -s -S \\")
        for a in args:
            out.append("                %s \\" % a)
        out.append("                && return 0 ;;")
    out.append("    esac")
    out.append("    return 1")
    out.append("}")
    out.append("")
    out.append('_gpuvet "$@"')
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    doc = json.loads(Path(sys.argv[1]).read_text())
    if doc.get("schema") != "gpuvet.options/1":
        sys.exit("%s: not gpuvet's option tables (schema %r)" % (sys.argv[1], doc.get("schema")))
    Path(sys.argv[2]).write_text(bash(doc))
    Path(sys.argv[3]).write_text(zsh(doc))


if __name__ == "__main__":
    main()
