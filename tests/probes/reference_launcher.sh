#!/bin/sh
# A stand-in for the reference's landlock-run (docs/contract.md, "Exit status and lines"): the
# grammar `[--ro P]... [--rw P]... [--deny-network] -- ARGV...` and `--probe`, nothing more. It
# knows no --features, --status-fd, --evidence or --ro-try, and answers an unknown argument as
# the reference does: one "landlock-run: " line on stderr, exit 125, and no other output. It
# confines nothing, so it never runs ARGV either: a valid run fails as a kernel without Landlock
# would. Tests use it to prove that such a launcher is never probed usable, and that its
# failures are runner failures, never the command's exit.
if [ "$1" = --probe ]; then
  if [ "$#" -ne 1 ]; then
    echo 'landlock-run: usage error: --probe takes no other arguments' >&2
    exit 125
  fi
  echo 'landlock: fully enforced'
  exit 0
fi
while [ "$#" -gt 0 ]; do
  case "$1" in
    --ro | --rw)
      if [ "$#" -lt 2 ]; then
        echo "landlock-run: usage error: $1 requires a path" >&2
        exit 125
      fi
      shift 2
      ;;
    --deny-network) shift ;;
    --)
      shift
      if [ "$#" -eq 0 ]; then break; fi
      echo 'landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)' >&2
      exit 125
      ;;
    *)
      echo "landlock-run: usage error: unknown argument: $1" >&2
      exit 125
      ;;
  esac
done
echo 'landlock-run: usage error: missing `-- <argv>...` command' >&2
exit 125
