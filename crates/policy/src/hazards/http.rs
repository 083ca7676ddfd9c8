//! HTTP `DELETE` requests to APIs, in every client's spelling (`curl -X
//! DELETE`, `--request=DELETE`, `-XDELETE`, HTTPie's `http DELETE`, `wget
//! --method=DELETE`, `gh api -X DELETE`). Other methods do not ask here; the
//! network itself is judged by the network rules.

use super::Opt::Val;
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "http-delete";
const MESSAGE: &str = "an HTTP `DELETE` request deletes a remote resource";
const DELETE: &[&str] = &["DELETE"];

pub const PACK: Pack = Pack {
    name: "http",
    programs: &[
        Program {
            names: &["curl", "curlie"],
            rules: &[Rule {
                all: &[&[Val("-X", DELETE), Val("--request", DELETE)]],
                hit: super::hz(CODE, MESSAGE),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["http", "https", "xh", "xhs", "httpie"],
            rules: &[Rule {
                sub: &["delete"],
                anywhere: true,
                hit: hz(CODE, MESSAGE),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["wget", "wget2"],
            rules: &[Rule {
                all: &[&[Val("--method", DELETE)]],
                hit: hz(CODE, MESSAGE),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["gh", "glab"],
            valued: &["-R", "--repo"],
            rules: &[Rule {
                sub: &["api"],
                all: &[&[Val("-X", DELETE), Val("--method", DELETE)]],
                hit: hz(CODE, MESSAGE),
                ..RULE
            }],
            ..PROGRAM
        },
    ],
};

#[cfg(test)]
mod tests {
    use super::super::testing::check;

    #[test]
    fn hazard_pack_http() {
        check(
            "http",
            &[
                "curl -X DELETE https://api.example.com/users/1",
                "curl -XDELETE https://api.example.com/things/1",
                "curl --request DELETE https://api.example.com/v1/projects/p",
                "curl --request=DELETE https://api.example.com/v1/x",
                "curl -s -X DELETE -H 'Authorization: Bearer t' https://api.example.com/r",
                "curl -sX DELETE https://api.example.com/keys/9",
                "curl.exe -X DELETE https://api.example.com/x",
                "http DELETE api.example.com/users/1",
                "http --auth u:p DELETE api.example.com/x",
                "xh delete api.example.com/users/1",
                "wget --method=DELETE https://api.example.com/users/1",
                "wget --method DELETE https://api.example.com/users/2",
                "gh api -X DELETE /repos/owner/repo/git/refs/heads/old",
                "gh api --method DELETE repos/o/r/hooks/1",
                "glab api -X DELETE projects/1",
            ],
            &[
                "curl https://api.example.com/users",
                "curl -X GET https://api.example.com/items",
                "curl -X POST -d '{}' https://api.example.com/items",
                "curl -H 'X-Action: DELETE' https://api.example.com/preview",
                "curl -d 'method=DELETE' https://api.example.com/form",
                "curl https://api.example.com/delete-requests",
                "http GET api.example.com/users",
                "http POST api.example.com/users name=alice",
                "xh get api.example.com/users",
                "wget --method=GET https://api.example.com/x",
                "gh api repos/owner/repo/pulls",
                "gh api -X POST repos/o/r/issues -f title=x",
            ],
        );
    }
}
