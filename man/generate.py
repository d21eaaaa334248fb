#!/usr/bin/env python3
"""Generates the man pages (troff), the bash and zsh completions and the options reference
(Markdown) of dsh-sandbox and landlock-run from the one table in man/cli.json, the table the
parser's option list is generated from too (man/generate_parser.py). Usage: generate.py CLI.json
OUTDIR VERSION (writes OUTDIR/man/*.1, OUTDIR/completions/ and OUTDIR/reference/*.md)."""
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


def markdown_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def reference(name, page):
    """Every command and every option of `name`, as the parser takes them, in Markdown."""
    out = [f"# {name} options", "", f"Generated from man/cli.json by man/generate.py. {page['summary']}.", ""]
    if page["commands"]:
        out += ["| command | what it does |", "|---|---|"]
        out += [f"| `{c['name']}` | {markdown_cell(c['help'])} |" for c in page["commands"]]
        out.append("")
    out += ["| option | commands | default | what it does |", "|---|---|---|---|"]
    for option in page["options"]:
        head = option["name"] + (" " + option["arg"] if "arg" in option else "")
        body = option["help"]
        if "values" in option:
            body += "; one of: " + ", ".join(option["values"])
        commands = ", ".join(option.get("commands", []))
        out.append(f"| `{head}` | {commands} | {markdown_cell(option.get('default', ''))} | "
                   f"{markdown_cell(body)} |")
    return "\n".join(out) + "\n"


def main():
    table_path, outdir, version = sys.argv[1:4]
    with open(table_path, encoding="utf-8") as table_file:
        table = json.load(table_file)
    os.makedirs(os.path.join(outdir, "man"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "completions"), exist_ok=True)
    os.makedirs(os.path.join(outdir, "reference"), exist_ok=True)
    for name, page in table.items():
        with open(os.path.join(outdir, "man", name + ".1"), "w", encoding="utf-8") as out:
            out.write(man_page(name, page, version))
        with open(os.path.join(outdir, "reference", name + ".md"), "w", encoding="utf-8") as out:
            out.write(reference(name, page))
    page = table["dsh-sandbox"]
    with open(os.path.join(outdir, "completions", "dsh-sandbox.bash"), "w", encoding="utf-8") as out:
        out.write(bash_completion(page))
    with open(os.path.join(outdir, "completions", "_dsh-sandbox"), "w", encoding="utf-8") as out:
        out.write(zsh_completion(page))


if __name__ == "__main__":
    main()
