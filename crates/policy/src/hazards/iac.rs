//! Infrastructure as code: Terraform, OpenTofu, Terragrunt, Pulumi, CDK,
//! CDKTF, Serverless, SAM, Copilot, Nomad. `destroy` (and `apply -destroy`),
//! removing state, deleting workspaces and stacks, and forced replacement ask;
//! `plan` (even `plan -destroy`), `validate`, `show`, `output` do not.

use super::Opt::{Flag, Prefix, Word};
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "infrastructure-destroy";

pub const PACK: Pack = Pack {
    name: "iac",
    programs: &[
        Program {
            names: &["terraform", "tofu", "terragrunt"],
            rules: &[
                Rule {
                    sub: &["destroy"],
                    anywhere: true,
                    hit: hz(
                        CODE,
                        "`terraform destroy` deletes the managed infrastructure",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["apply|run-all|run"],
                    anywhere: true,
                    all: &[&[
                        Word("-destroy"),
                        Word("--destroy"),
                        Prefix("-replace"),
                        Prefix("--replace"),
                    ]],
                    hit: hz(
                        CODE,
                        "`terraform apply -destroy`/`-replace` deletes infrastructure",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["state", "rm"],
                    hit: hz(
                        CODE,
                        "`terraform state rm` forgets resources (they are left unmanaged)",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["state", "push"],
                    all: &[&[Word("-force"), Word("--force")]],
                    hit: hz(
                        CODE,
                        "`terraform state push -force` overwrites the remote state",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["workspace", "delete"],
                    hit: hz(CODE, "deletes a Terraform workspace"),
                    ..RULE
                },
                Rule {
                    sub: &["taint"],
                    hit: hz(
                        CODE,
                        "`terraform taint` forces a resource to be destroyed and re-created",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["pulumi"],
            valued: &["-s", "--stack", "-C", "--cwd"],
            rules: &[
                Rule {
                    sub: &["destroy|down"],
                    none: &[Flag("--preview-only")],
                    hit: hz(CODE, "`pulumi destroy` deletes the stack's resources"),
                    ..RULE
                },
                Rule {
                    sub: &["stack", "rm"],
                    hit: hz(CODE, "`pulumi stack rm` deletes a stack"),
                    ..RULE
                },
                Rule {
                    sub: &["state", "delete"],
                    hit: hz(CODE, "`pulumi state delete` forgets a resource"),
                    ..RULE
                },
                Rule {
                    sub: &["up|update"],
                    all: &[&[Prefix("--replace"), Prefix("--target-replace")]],
                    hit: hz(
                        CODE,
                        "`pulumi up --replace` destroys and re-creates resources",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["cdk", "cdktf", "waypoint"],
            rules: &[Rule {
                sub: &["destroy"],
                hit: hz(CODE, "`cdk destroy` deletes the stacks"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["serverless", "sls"],
            rules: &[Rule {
                sub: &["remove"],
                hit: hz(CODE, "`serverless remove` deletes the deployed service"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["sam"],
            rules: &[Rule {
                sub: &["delete"],
                hit: hz(CODE, "`sam delete` deletes the application's stack"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["copilot"],
            rules: &[Rule {
                sub: &["delete"],
                anywhere: true,
                hit: hz(
                    CODE,
                    "`copilot … delete` deletes an application, environment or service",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["nomad"],
            rules: &[Rule {
                sub: &["job", "stop"],
                all: &[&[Word("-purge"), Word("--purge")]],
                hit: hz(CODE, "`nomad job stop -purge` deletes the job"),
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
    fn hazard_pack_iac() {
        check(
            "iac",
            &[
                "terraform destroy",
                "terraform destroy -auto-approve",
                "terraform -chdir=infra destroy",
                "terraform -chdir infra destroy",
                "terraform apply -destroy",
                "terraform apply -auto-approve -destroy",
                "terraform apply -replace=aws_instance.web",
                "terraform state rm aws_instance.web",
                "terraform workspace delete staging",
                "terraform taint aws_instance.web",
                "terraform.exe destroy",
                "tofu destroy",
                "tofu apply -destroy",
                "terragrunt run-all destroy",
                "terragrunt run --all destroy",
                "pulumi destroy --yes",
                "pulumi destroy -y -s prod",
                "pulumi down",
                "pulumi stack rm prod",
                "pulumi up --yes --replace urn:x",
                "cdk destroy --all --force",
                "npx cdk destroy",
                "cdktf destroy",
                "sls remove --stage prod",
                "sam delete --stack-name app",
                "copilot app delete",
                "nomad job stop -purge web",
            ],
            &[
                "terraform init",
                "terraform plan",
                "terraform plan -destroy",
                "terraform plan -destroy -out destroy.tfplan",
                "terraform validate",
                "terraform show -json tfplan",
                "terraform output",
                "terraform state list",
                "terraform state show aws_instance.web",
                "terraform workspace list",
                "terraform workspace select dev",
                "terraform -chdir=infra plan",
                "terraform destroy -help",
                "tofu plan",
                "terragrunt run-all plan",
                "pulumi preview",
                "pulumi stack ls",
                "pulumi destroy --preview-only",
                "pulumi up --yes",
                "cdk synth",
                "cdk diff",
                "sam build",
                "nomad job stop web",
            ],
        );
    }
}
