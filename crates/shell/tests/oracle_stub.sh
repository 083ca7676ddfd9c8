#!/run/oracle/bash -p
# Oracle stub (see tests/oracle.rs). Inside the oracle's sandbox every program
# name on PATH, and every name in the system's bin directories, is a symlink to
# this script, so whatever bash executes lands here first.
#
# It records the path it was run as ($0: a PATH lookup gives
# /run/oracle/bin/NAME, an absolute path gives that path), the name of the
# process that started it (bash, or a program such as git running a hook) and
# its arguments. One file per run, so concurrent runs (pipelines, `&`) never
# interleave; fields end in NUL, so any argument survives.
#
# Programs with an entry in /run/oracle/wrap (wrappers such as env, xargs or sh,
# and plain data filters such as cat) then run for real, so what *they* execute
# comes through the stubs as well; every other program does nothing.
#
# `-p` (privileged mode) makes this bash ignore BASH_ENV, SHELLOPTS, BASHOPTS
# and exported functions, which the command under test may have set to
# subvert it. Only builtins and absolute paths are used: PATH holds only stubs.
set -o noclobber
parent=?
read -r parent <"/proc/$PPID/comm" 2>/dev/null
printf '%s\0' "$0" "$parent" "$@" >"/run/oracle/log/$BASHPID.$SRANDOM" 2>/dev/null
name=${0##*/}
if [[ -e /run/oracle/wrap/$name ]]; then
    exec -a "$name" "/run/oracle/wrap/$name" "$@"
fi
exit 0
