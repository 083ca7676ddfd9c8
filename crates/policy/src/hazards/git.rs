//! git commands that discard uncommitted work, delete branches, stashes,
//! reflogs or unreachable objects, or rewrite a remote's history; and GitHub's
//! `gh … delete`.
//!
//! Decided, not guessed: `git restore --staged` (index only) is safe, any
//! restore of the work tree asks; `git reset --keep`/`--merge` and
//! `git branch -d` refuse to lose work, so they are safe; `git push --force-with-lease`
//! still rewrites history (asks, and a rule naming `--force-with-lease` does
//! not allow `--force`). A path given to `git checkout` without `--` cannot be
//! told from a branch name: only `--`, `.`, `:/` and `-f` mark a discarding checkout.

use super::Opt::{Flag, Prefix, Val, Word};
use super::{Finder, PROGRAM, Pack, Program, RULE, Rule, hz};

const DISCARD: &str = "destructive-git";
const DRY_RUN: &[super::Opt] = &[Flag("-n"), Flag("--dry-run")];

pub const PACK: Pack = Pack {
    name: "git",
    programs: &[
        Program {
            names: &["git"],
            finder: Finder::Git,
            rules: &[
                Rule {
                    sub: &["reset"],
                    all: &[&[Flag("--hard")]],
                    hit: hz(DISCARD, "`git reset --hard` discards uncommitted changes"),
                    ..RULE
                },
                Rule {
                    sub: &["checkout"],
                    all: &[&[
                        Word("--"),
                        Word("."),
                        Word(":/"),
                        Flag("-f"),
                        Flag("--force"),
                    ]],
                    hit: hz(
                        DISCARD,
                        "`git checkout` of paths or with `--force` overwrites uncommitted changes",
                    ),
                    ..RULE
                },
                // The index only: the work tree keeps its changes.
                Rule {
                    sub: &["restore"],
                    all: &[&[Flag("--staged"), Flag("-S")]],
                    none: &[Flag("--worktree"), Flag("-W")],
                    ..RULE
                },
                Rule {
                    sub: &["restore"],
                    hit: hz(
                        DISCARD,
                        "`git restore` overwrites uncommitted changes in the work tree",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["switch"],
                    all: &[&[
                        Flag("--discard-changes"),
                        Flag("-f"),
                        Flag("--force"),
                        Flag("-C"),
                        Flag("--force-create"),
                    ]],
                    hit: hz(
                        DISCARD,
                        "`git switch` discarding changes or resetting a branch",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["read-tree"],
                    all: &[&[Flag("-u")], &[Flag("--reset")]],
                    hit: hz(
                        DISCARD,
                        "`git read-tree -u --reset` overwrites the work tree",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["branch"],
                    all: &[&[Flag("-D"), Flag("-f"), Flag("--force")]],
                    hit: hz(
                        DISCARD,
                        "`git branch -D`/`-f` deletes or moves a branch, unmerged work included",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["stash", "drop|clear"],
                    hit: hz(DISCARD, "`git stash drop/clear` deletes stashed work"),
                    ..RULE
                },
                Rule {
                    sub: &["reflog", "expire|delete"],
                    none: DRY_RUN,
                    hit: hz(DISCARD, "`git reflog expire/delete` drops recovery points"),
                    ..RULE
                },
                Rule {
                    sub: &["gc"],
                    all: &[&[Val("--prune", &["now", "all"])]],
                    hit: hz(DISCARD, "`git gc --prune=now` deletes unreachable objects"),
                    ..RULE
                },
                Rule {
                    sub: &["prune"],
                    none: DRY_RUN,
                    hit: hz(DISCARD, "`git prune` deletes unreachable objects"),
                    ..RULE
                },
                Rule {
                    sub: &["clean"],
                    all: &[&[Flag("-f"), Flag("--force")]],
                    none: DRY_RUN,
                    hit: hz(DISCARD, "`git clean -f` deletes untracked files"),
                    ..RULE
                },
                Rule {
                    sub: &["push"],
                    all: &[&[
                        Flag("-f"),
                        Prefix("--force"),
                        Flag("--delete"),
                        Flag("-d"),
                        Flag("--mirror"),
                        Flag("--prune"),
                        Word("+*"),
                        Word(":*"),
                    ]],
                    none: DRY_RUN,
                    hit: hz(
                        DISCARD,
                        "a forced or deleting `git push` rewrites remote history",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["filter-branch|filter-repo"],
                    hit: hz(DISCARD, "rewrites the repository's history"),
                    ..RULE
                },
                Rule {
                    sub: &["update-ref"],
                    all: &[&[Flag("-d")]],
                    hit: hz(DISCARD, "`git update-ref -d` deletes a ref"),
                    ..RULE
                },
                Rule {
                    sub: &["rm"],
                    all: &[&[Flag("-f"), Flag("--force")]],
                    none: &[Flag("--cached")],
                    hit: hz(
                        DISCARD,
                        "`git rm -f` deletes files with uncommitted changes",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["worktree", "remove|rm"],
                    all: &[&[Flag("-f"), Flag("--force")]],
                    hit: hz(
                        DISCARD,
                        "`git worktree remove --force` deletes a work tree with its changes",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["submodule", "deinit"],
                    all: &[&[Flag("-f"), Flag("--force")]],
                    hit: hz(
                        DISCARD,
                        "`git submodule deinit --force` deletes submodule work trees",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        // Deleting on GitHub cannot be undone from here.
        Program {
            names: &["gh"],
            valued: &[
                "-R",
                "--repo",
                "-X",
                "--method",
                "-f",
                "--field",
                "-F",
                "--raw-field",
                "-H",
                "--header",
                "-q",
                "--jq",
                "-t",
                "--template",
                "--input",
                "-p",
                "--preview",
            ],
            rules: &[
                Rule {
                    sub: &["*", "delete|delete-asset"],
                    hit: hz(
                        "remote-delete",
                        "deletes a GitHub repository, release, secret, key or other resource",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["repo", "archive"],
                    hit: hz("remote-delete", "archives a GitHub repository"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::super::testing::check;

    #[test]
    fn hazard_pack_git() {
        check(
            "git",
            &[
                "git reset --hard",
                "git -C x reset --hard HEAD~1",
                "git --git-dir=.git --work-tree=. reset --hard",
                "git --attr-source HEAD push --force",
                "git -C x clean -fdx",
                "git clean -xdf",
                "git clean --force",
                "git push --force-with-lease=main:HEAD origin HEAD:main",
                "git push origin +main",
                "git push -fu origin main",
                "git push origin :feature",
                "git push --delete origin v1",
                "git push --mirror backup",
                "git checkout -- .",
                "git checkout -- src/main.rs",
                "git checkout .",
                "git checkout -f",
                "git checkout HEAD -- README.md",
                "git restore .",
                "git restore src/main.rs",
                "git restore --source=HEAD~2 src/lib.rs",
                "git restore --staged --worktree .",
                "git restore -SW src",
                "git switch --discard-changes main",
                "git switch -f main",
                "git read-tree -u --reset HEAD",
                "git branch -D feature",
                "git branch -df feature",
                "git branch -f main HEAD~5",
                "git stash drop",
                "git stash clear",
                "git reflog expire --expire=now --all",
                "git gc --prune=now",
                "git prune",
                "git filter-branch --tree-filter 'rm -f x' HEAD",
                "git update-ref -d refs/heads/x",
                "git rm -rf src",
                "git worktree remove --force wt",
                "git.exe reset --hard",
                "gh repo delete owner/x --yes",
                "gh release delete v1",
                "gh repo archive o/r",
                "gh cache delete --all",
            ],
            &[
                "git status",
                "git checkout -b feature",
                "git checkout main",
                "git checkout -",
                "git switch -c feature",
                "git restore --staged src/main.rs",
                "git restore --staged .",
                "git restore -S README.md",
                "git reset --soft HEAD~1",
                "git reset HEAD~1",
                "git reset --keep HEAD~1",
                "git reset --merge",
                "git branch -d merged",
                "git branch -m old new",
                "git stash pop",
                "git stash list",
                "git reflog",
                "git gc",
                "git gc --aggressive",
                "git prune --dry-run",
                "git clean -n",
                "git clean -nd",
                "git push origin main",
                "git push -u origin feature",
                "git push origin HEAD:main",
                "git push --dry-run --force",
                "git rm --cached secrets.txt",
                "git rm old.txt",
                "git read-tree HEAD",
                "git diff -- .",
                "git log -- .",
                "git add -- .",
                "git filter-branch --help",
                "git commit -m 'git push --force is forbidden'",
                "git --bogus reset --hard",
                "gh pr create --fill",
                "gh repo view",
                "gh release list",
            ],
        );
    }
}
