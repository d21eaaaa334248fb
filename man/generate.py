#!/usr/bin/env python3
"""Generates the man pages (troff) and the bash and zsh completions of dsh-sandbox and
landlock-run from the one table in man/cli.json, and the committed reference page
docs/cli-reference.md from the same table.

Usage: generate.py CLI.json OUTDIR VERSION        (writes OUTDIR/man/*.1 and OUTDIR/completions/)
       generate.py --reference CLI.json REPO_ROOT [--check]
                                                  (writes REPO_ROOT/docs/cli-reference.md; with
                                                  --check, fails when regenerating would change it)"""
import json
import os
import sys


def roff(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + line) if line[:1] in ".'" else line for line in text.split("\n"))


def man_page(name, page, version):
    out = [f'.TH {name.upper()} 1 "" "{name} {version}" "User Commands"',
           ".SH NAME", f"{roff(name)} \\- {roff(page['summary'])}", ".SH SYNOPSIS"]
    for line in page["synopsis"]:
        out += [".nf", roff(line), ".fi"]
    out += [".SH DESCRIPTION", roff(page["description"])]
    if page["commands"]:
        out.append(".SH COMMANDS")
        for command in page["commands"]:
            out += [".TP", f"\\fB{roff(command['name'])}\\fR", roff(command["help"])]
    out.append(".SH OPTIONS")
    for option in page["options"]:
        head = f"\\fB{roff(option['name'])}\\fR"
        if "arg" in option:
            head += f" \\fI{roff(option['arg'])}\\fR"
        body = option["help"]
        if "values" in option:
            body += "; one of: " + ", ".join(option["values"])
        if "default" in option:
            body += f" (default: {option['default']})"
        if option.get("commands"):
            body += " [" + ", ".join(option["commands"]) + "]"
        out += [".TP", head, roff(body)]
    out.append(".SH EXIT STATUS")
    for code, meaning in page["exit_status"]:
        out += [".TP", f"\\fB{roff(code)}\\fR", roff(meaning)]
    if page.get("files"):
        out.append(".SH FILES")
        for path, meaning in page["files"]:
            out += [".TP", f"\\fI{roff(path)}\\fR", roff(meaning)]
    out += [".SH ENVIRONMENT", roff(page["environment"]), ".SH EXAMPLES"]
    for command, meaning in page["examples"]:
        out += [".PP", roff(meaning) + ":", ".nf", ".RS", roff(command), ".RE", ".fi"]
    out += [".SH SEE ALSO", roff(", ".join(page["see_also"]))]
    return "\n".join(out) + "\n"


def bash_completion(page):
    commands = " ".join(c["name"] for c in page["commands"])
    cases = []
    for command in page["commands"]:
        flags = " ".join(o["name"] for o in page["options"] if command["name"] in o["commands"])
        cases.append(f'    {command["name"]}) opts="{flags} --help" ;;')
    values = []
    for option in page["options"]:
        if "values" in option:
            values.append(f'    {option["name"]}) COMPREPLY=($(compgen -W "{" ".join(option["values"])}" -- "$cur")); return ;;')
        elif option.get("arg") in ("DIR", "FILE"):
            flag = "-d" if option["arg"] == "DIR" else "-f"
            values.append(f'    {option["name"]}) COMPREPLY=($(compgen {flag} -- "$cur")); return ;;')
    return f"""# bash completion for dsh-sandbox (generated from man/cli.json)
_dsh_sandbox() {{
  local cur prev command opts i
  cur="${{COMP_WORDS[COMP_CWORD]}}"
  prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    [ "${{COMP_WORDS[i]}}" = -- ] && return
    case "${{COMP_WORDS[i]}}" in {commands.replace(" ", "|")}) command="${{COMP_WORDS[i]}}" ;; esac
  done
  case "$prev" in
{chr(10).join(values)}
  esac
  if [ -z "$command" ]; then
    COMPREPLY=($(compgen -W "{commands} --version --help" -- "$cur"))
    return
  fi
  case "$command" in
{chr(10).join(cases)}
  esac
  COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}}
complete -F _dsh_sandbox dsh-sandbox
"""


def zsh_completion(page):
    def spec(option):
        text = option["help"].replace("'", "'\\''").replace("[", "(").replace("]", ")").replace(":", " ")
        if "values" in option:
            return f"'{option['name']}[{text}]:{option['arg'].lower()}:({' '.join(option['values'])})'"
        if option.get("arg") == "DIR":
            return f"'{option['name']}[{text}]:directory:_files -/'"
        if option.get("arg") == "FILE":
            return f"'{option['name']}[{text}]:file:_files'"
        if "arg" in option:
            return f"'{option['name']}[{text}]:{option['arg'].lower()}:'"
        return f"'{option['name']}[{text}]'"

    functions = []
    for command in page["commands"]:
        specs = " \\\n    ".join(spec(o) for o in page["options"] if command["name"] in o["commands"])
        functions.append(f"""_dsh_sandbox_{command['name']}() {{
  _arguments -s \\
    {specs} \\
    '*::command:_normal'
}}""")
    names = " ".join(f"'{c['name']}:{c['help'].replace(':', ' ')}'" for c in page["commands"])
    return f"""#compdef dsh-sandbox
# zsh completion for dsh-sandbox (generated from man/cli.json)
{chr(10).join(functions)}

_dsh_sandbox() {{
  local -a commands
  commands=({names})
  if (( CURRENT == 2 )); then
    _describe command commands
    return
  fi
  local command=$words[2]
  shift words; (( CURRENT-- ))
  (( $+functions[_dsh_sandbox_$command] )) && _dsh_sandbox_$command
}}

_dsh_sandbox "$@"
"""


def md_code(text):
    """Inline code for a Markdown table cell or list item: backticks that never close early."""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def md_option(option):
    head = option["name"] + (" " + option["arg"] if "arg" in option else "")
    body = option["help"]
    if "values" in option:
        body += "; one of: " + ", ".join(md_code(v) for v in option["values"])
    if "default" in option:
        body += f" (default: {option['default']})"
    return f"| {md_cell(md_code(head))} | {md_cell(body)} |"


def md_options(options):
    return ["| option | meaning |", "|---|---|"] + [md_option(o) for o in options]


def md_page(name, page):
    out = [f"## {name}", "", page["summary"][:1].upper() + page["summary"][1:] + ".", "", "```"]
    out += page["synopsis"] + ["```", "", page["description"], ""]
    for command in page["commands"]:
        out += [f"### {name} {command['name']}", "", command["help"][:1].upper() + command["help"][1:] + ".", ""]
        options = [o for o in page["options"] if command["name"] in o.get("commands", [])]
        out += (md_options(options) if options else ["No options."]) + [""]
    if not page["commands"]:
        out += ["### Options", ""] + md_options(page["options"]) + [""]
    out += [f"### Exit status of {name}", "", "| status | meaning |", "|---|---|"]
    out += [f"| {md_cell(code)} | {md_cell(meaning)} |" for code, meaning in page["exit_status"]]
    if page.get("files"):
        out += ["", f"### Files of {name}", "", "| file | meaning |", "|---|---|"]
        out += [f"| {md_cell(md_code(path))} | {md_cell(meaning)} |" for path, meaning in page["files"]]
    out += ["", f"### Environment of {name}", "", page["environment"], "", f"### Examples of {name}", ""]
    for command, meaning in page["examples"]:
        out += [meaning[:1].upper() + meaning[1:] + ":", "", "    " + command, ""]
    return out


def reference(table):
    out = ["# CLI reference", "",
           "<!-- Generated by man/generate.py --reference from man/cli.json: edit those, then run",
           "     python3 man/generate.py --reference man/cli.json . -->", "",
           "Every command and option of `dsh-sandbox` and `landlock-run`, from the table that also",
           "generates the man pages and the shell completions and that the parser is tested against.",
           "What the options mean together: [architecture.md](architecture.md),",
           "[contract.md](contract.md), [boundary.md](boundary.md).", ""]
    for name, page in table.items():
        out += md_page(name, page)
    return "\n".join(out).rstrip("\n") + "\n"


def committed_differs(path, text):
    """Whether the committed file at `path` is missing or other than `text` (the --check of a
    generated file that is committed: this page and the bindings' option tables)."""
    try:
        with open(path, encoding="utf-8") as committed:
            return committed.read() != text
    except FileNotFoundError:
        return True


def write_reference(table_path, root, check):
    with open(table_path, encoding="utf-8") as table_file:
        text = reference(json.load(table_file))
    path = os.path.join(root, "docs", "cli-reference.md")
    if check:
        if not committed_differs(path, text):
            return
        sys.exit(f"generate: {path} is out of date with man/cli.json (run python3 man/generate.py "
                 "--reference man/cli.json . and commit it)")
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def main():
    if sys.argv[1:2] == ["--reference"]:
        if len(sys.argv) not in (4, 5) or sys.argv[4:] not in ([], ["--check"]):
            sys.exit(__doc__)
        write_reference(sys.argv[2], sys.argv[3], sys.argv[4:] == ["--check"])
        return
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    table_path, outdir, version = sys.argv[1:4]
    with open(table_path, encoding="utf-8") as table_file:
        table = json.load(table_file)
    os.makedirs(os.path.join(outdir, "man"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "completions"), exist_ok=True)
    for name, page in table.items():
        with open(os.path.join(outdir, "man", name + ".1"), "w", encoding="utf-8") as out:
            out.write(man_page(name, page, version))
    page = table["dsh-sandbox"]
    with open(os.path.join(outdir, "completions", "dsh-sandbox.bash"), "w", encoding="utf-8") as out:
        out.write(bash_completion(page))
    with open(os.path.join(outdir, "completions", "_dsh-sandbox"), "w", encoding="utf-8") as out:
        out.write(zsh_completion(page))


if __name__ == "__main__":
    main()
