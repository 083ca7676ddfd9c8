//! The class "quotes that do not quote": places where bash expands text as if
//! it were double-quoted, so single quotes are literal characters and the
//! `$( )` or backticks between them run. Array subscripts (arithmetic), the
//! operand of a double-quoted `${x:-…}`, variable names given to builtins that
//! evaluate their subscript, and `mapfile -C` callbacks. Each shape must show
//! the command it runs (`id`) or be opaque; never a complete analysis without
//! it. Real bash proves the shapes in `tests/it/oracle.rs` (corpus notes
//! "quotes that do not quote").

// Test code: a failed unwrap, index or panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use portcullis_shell::analyze;

/// The analysis reports `program`, or is incomplete (a policy asks).
fn sees(text: &str, program: &str) -> bool {
    let a = analyze(text);
    !a.is_complete() || a.programs().any(|p| p == program)
}

fn assert_seen(shapes: &[&str]) {
    let missed: Vec<&&str> = shapes.iter().filter(|t| !sees(t, "id")).collect();
    assert!(missed.is_empty(), "`id` not seen in: {missed:#?}");
}

#[test]
fn array_subscripts_are_arithmetic_in_every_expansion_form() {
    assert_seen(&[
        "echo ${arr['$(id)']}",
        "echo ${arr[\"$(id)\"]}",
        "echo ${arr['`id`']}",
        "echo ${a['$(id)']:-x}",
        "echo ${a['$(id)']-x}",
        "echo ${a['$(id)']:=x}",
        "echo ${a['$(id)']:+x}",
        "echo ${a['$(id)']:?x}",
        "echo ${a['$(id)']@Q}",
        "echo ${a['$(id)']@P}",
        "echo ${a['$(id)']^^}",
        "echo ${a['$(id)'],}",
        "echo ${#a['$(id)']}",
        "echo ${!a['$(id)']}",
        "echo ${a['$(id)']#x}",
        "echo ${a['$(id)']%%x}",
        "echo ${a['$(id)']/x/y}",
        "echo ${a['$(id)']:1:2}",
        "echo ${a[ '$(id)' ]}",
        "echo ${a[${b['$(id)']}]}",
        "echo \"${a['$(id)']}\"",
        "echo $\"${a['$(id)']}\"",
        "[[ ${a['$(id)']} ]]",
        "[[ -n ${a['$(id)']} && x == x ]]",
        "for x in ${a['$(id)']}; do :; done",
        "select x in ${a['$(id)']}; do break; done",
        "case ${a['$(id)']} in *) ;; esac",
        "case x in ${a['$(id)']}) ;; esac",
        "cat <<< ${a['$(id)']}",
        "cat <<E\n${a['$(id)']}\nE",
        "cat <<-E\n\t${a['$(id)']}\nE",
        "x=${a['$(id)']}",
        "FOO=${a['$(id)']} true",
        "echo > ${a['$(id)']}",
        "echo $(( a['$(id)'] ))",
        "(( a['$(id)'] ))",
        "echo $[ a['$(id)'] ]",
        "for (( i = a['$(id)']; i < 1; i++ )); do :; done",
        "[[ a['$(id)'] -eq 1 ]]",
        "echo ${x:'$(id)'}",
        "echo ${x:1:'$(id)'}",
        "echo $(( $'\\x24(id)' ))",
        "echo ${a[$'\\x24(id)']}",
        "echo ${@:'$(id)'}",
        "echo ${a[@]:'$(id)':1}",
        "echo $(( ${x:-'$(id)'} ))",
        "[[ 'a[$(id)]' -eq 1 ]]",
    ]);
}

#[test]
fn assignments_and_declarations_evaluate_their_subscripts() {
    assert_seen(&[
        "arr['$(id)']=1",
        "arr['$(id)']+=1",
        "arr['`id`']=1 true",
        "a[$'\\x24(id)']=1",
        "a[ '$(id)' ]=1",
        "a[ \"$(id)\" ]=1",
        "a=(['$(id)']=1)",
        "a+=(['$(id)']=1)",
        "a=([ '$(id)' ]=1)",
        "a=([$'\\x24(id)']=1)",
        "declare a['$(id)']=1",
        "declare -a a['$(id)']",
        "declare -A h['$(id)']=1",
        "typeset a['$(id)']=1",
        "local a['$(id)']=1",
        "f(){ local a['$(id)']=1; }; f",
        "readonly a['$(id)']=1",
        "export a['$(id)']=1",
        "declare -i x; x='a[$(id)]'",
        "declare -i x; for x in 'a[$(id)]'; do :; done",
        "declare -i x; read x",
        "declare -n r; r='a[$(id)]'; echo $r",
        "declare -n r='a[$(id)]'",
        "declare -n r; for r in 'a[$(id)]'; do :; done",
        "r='a[$(id)]'; declare -n r; echo $r",
        "declare -i x; x+='a[$(id)]'",
        "declare -i x='a[$(id)]'",
        "f(){ local -i x='a[$(id)]'; }; f",
        "declare -ai a; a=('b[$(id)]')",
        "declare -ai a; a[0]='b[$(id)]'",
        "declare -i n; printf -v n %s 'a[$(id)]'",
        "x='a[$(id)]'; echo $((x)) ${y[x]} ${y:x}",
    ]);
}

#[test]
fn builtins_that_take_variable_names_evaluate_subscripts() {
    assert_seen(&[
        "let 'a[$(id)]'",
        "let x='a[$(id)]'",
        "[[ -v a['$(id)'] ]]",
        "test -v 'a[$(id)]'",
        "[ -v 'a[$(id)]' ]",
        "printf -v 'a[$(id)]' x",
        "printf -v \"a[\\$(id)]\" x",
        "read 'a[$(id)]' <<< x",
        "read -r 'a[$(id)]' <<< x",
        "read -t 1 -d , 'a[$(id)]' <<< x",
        "read -p x 'a[$(id)]' <<< x",
        "unset 'a[$(id)]'",
        "unset -v 'a[$(id)]'",
        "wait -p 'a[$(id)]'",
        "getopts ab 'a[$(id)]'",
        "mapfile 'a[$(id)]' <<< x",
    ]);
}

#[test]
fn double_quoted_parameter_operands_take_single_quotes_literally() {
    assert_seen(&[
        "echo \"${x:-'$(id)'}\"",
        "echo \"${x-'$(id)'}\"",
        "echo \"${x:='$(id)'}\"",
        "echo \"${x='$(id)'}\"",
        "echo \"${x:+'$(id)'}\"",
        "echo \"${x+'$(id)'}\"",
        "echo \"${x:?'$(id)'}\"",
        "echo \"${x?'$(id)'}\"",
        "echo \"${x:-'`id`'}\"",
        "echo \"${x:-${y:-'$(id)'}}\"",
        "echo \"${x:-\"${y:-'$(id)'}\"}\"",
        "echo ${x:-\"${y:-'$(id)'}\"}",
        "echo \"${x:-$'\\x24(id)'}\"",
        "echo \"${x:-$'\\x60id\\x60'}\"",
        "echo \"${x[0]:-'$(id)'}\"",
        "echo \"${x[@]:-'$(id)'}\"",
        "echo \"${1:-'$(id)'}\"",
        "echo \"${@:-'$(id)'}\"",
        "echo \"pre ${x:-'$(id)'} post\"",
        "echo $\"${x:-'$(id)'}\"",
        "x=\"${y:-'$(id)'}\"",
        "a=(\"${x:-'$(id)'}\")",
        "[[ \"${x:-'$(id)'}\" ]]",
        "case \"${x:-'$(id)'}\" in *) ;; esac",
        "cat <<E\n${x:-'$(id)'}\nE",
        "cat <<< \"${x:-'$(id)'}\"",
        // Pattern operands (quotes do quote there in bash 5, but compat
        // options change that): reported too.
        "echo \"${x/a/'$(id)'}\"",
        "shopt -s compat42; echo \"${x/a/'$(id)'}\"",
    ]);
}

#[test]
fn mapfile_callbacks_run() {
    for (text, program) in [
        ("mapfile -C id -c 1 arr <<< a", "id"),
        ("readarray -C id -c 1 arr <<< a", "id"),
        ("mapfile -tC id -c1 arr <<< a", "id"),
        ("mapfile -c1 -Cid <<< a", "id"),
        ("mapfile -t -c 1 -C 'uname -a' arr < f", "uname"),
        ("printf 'a\\n' | mapfile -C 'id;:' -c 1", "id"),
        ("builtin mapfile -C id -c 1 arr <<< a", "id"),
    ] {
        assert!(sees(text, program), "{text}");
    }
    // The callback is walked as a script: its commands are reported, with
    // the index and line bash appends as run-time arguments.
    let a = analyze("mapfile -C 'rm -f' -c 1 arr <<< a");
    let rm = a.commands.iter().find(|c| c.program == "rm").expect("rm");
    assert!(rm.argv.is_none(), "{rm:?}");
    // A callback known only at run time, or an option that may be `-C`.
    for text in ["mapfile -C \"$cb\" arr", "mapfile \"$opt\" arr"] {
        assert!(!analyze(text).is_complete(), "{text}");
    }
}

/// The fix must not make everyday shapes opaque or invent commands.
#[test]
fn plain_shapes_stay_plain() {
    for text in [
        "echo \"${x:-'default value'}\"",
        "echo \"${x:-$HOME}\"",
        "echo ${x:-'$(id)'}",
        "echo \"${x:-\\$(id)}\"",
        "echo ${arr[0]} ${arr[@]} ${#arr[@]}",
        "arr[1]=x",
        "a=([0]=x [1]=y)",
        "declare -a a=(x y)",
        "mapfile -t lines < file.txt",
        "readarray -t -d '' files < list",
        "while getopts ab: opt; do :; done",
        "read -r line < file",
        "printf -v out '%s' x",
    ] {
        let a = analyze(text);
        assert!(a.is_complete(), "{text}: {:?}", a.opaque);
        assert!(!a.programs().any(|p| p == "id"), "{text}");
    }
}
