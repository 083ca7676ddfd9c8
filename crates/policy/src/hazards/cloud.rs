//! Cloud command lines: AWS, Google Cloud, Azure and other providers' CLIs,
//! object-storage tools (`gsutil`, `s3cmd`, `rclone`). Deleting, terminating,
//! purging and emptying ask; listing, describing, copying and deploying do not.
//! `aws` operations are judged by name (`delete-*`, `terminate-*`, `purge-*` …),
//! `gcloud` and `az` by a `delete` word anywhere among the command's groups.

use super::Opt::{Flag, Word};
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "cloud-delete";

const AWS_VALUED: &[&str] = &[
    "--profile",
    "--region",
    "--output",
    "--endpoint-url",
    "--query",
    "--color",
    "--ca-bundle",
    "--cli-read-timeout",
    "--cli-connect-timeout",
    "--cli-binary-format",
];

const DRY_RUN: &[super::Opt] = &[Flag("--dryrun"), Flag("--dry-run")];

pub const PACK: Pack = Pack {
    name: "cloud",
    programs: &[
        Program {
            names: &["aws"],
            valued: AWS_VALUED,
            rules: &[
                Rule {
                    sub: &["s3", "rm|rb"],
                    none: DRY_RUN,
                    hit: hz(CODE, "`aws s3 rm/rb` deletes objects or buckets"),
                    ..RULE
                },
                Rule {
                    sub: &["s3", "sync"],
                    all: &[&[Flag("--delete")]],
                    none: DRY_RUN,
                    hit: hz(CODE, "`aws s3 sync --delete` deletes destination objects"),
                    ..RULE
                },
                Rule {
                    sub: &["s3", "mv"],
                    all: &[&[Flag("--recursive")]],
                    none: DRY_RUN,
                    hit: hz(
                        CODE,
                        "`aws s3 mv --recursive` moves (deletes at the source) every object",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &[
                        "*",
                        "delete-*|batch-delete-*|terminate-*|purge-*|deregister-*|schedule-key-deletion|close-account|remove-*|disable-key",
                    ],
                    none: DRY_RUN,
                    hit: hz(
                        CODE,
                        "an AWS operation that deletes, terminates or purges resources",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["gcloud"],
            rules: &[
                Rule {
                    sub: &["delete|purge"],
                    anywhere: true,
                    hit: hz(CODE, "`gcloud … delete` deletes Google Cloud resources"),
                    ..RULE
                },
                Rule {
                    sub: &["storage", "rm"],
                    anywhere: true,
                    hit: hz(CODE, "`gcloud storage rm` deletes objects"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["gsutil"],
            valued: &["-o", "-h", "-u", "-i"],
            rules: &[
                Rule {
                    sub: &["rm|rb|del"],
                    hit: hz(CODE, "`gsutil rm/rb` deletes objects or buckets"),
                    ..RULE
                },
                Rule {
                    sub: &["rsync"],
                    all: &[&[Flag("-d")]],
                    none: &[Flag("-n")],
                    hit: hz(CODE, "`gsutil rsync -d` deletes destination objects"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["az"],
            rules: &[Rule {
                sub: &["delete|purge|delete-batch|remove"],
                anywhere: true,
                hit: hz(CODE, "`az … delete` deletes Azure resources"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &[
                "doctl",
                "hcloud",
                "linode-cli",
                "oci",
                "scw",
                "vultr-cli",
                "exo",
                "upcloud",
            ],
            rules: &[Rule {
                sub: &["delete|rm|destroy"],
                anywhere: true,
                hit: hz(CODE, "deletes cloud resources"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["ibmcloud"],
            rules: &[Rule {
                sub: &["*-delete|delete|rm"],
                anywhere: true,
                hit: hz(CODE, "deletes IBM Cloud resources"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["heroku", "netlify", "firebase"],
            valued: &["-a", "--app", "-r", "--remote", "--project", "-P"],
            rules: &[Rule {
                sub: &["*:destroy|*:delete|*:reset|*:disable|destroy|delete"],
                hit: hz(CODE, "deletes or resets an app, site, database or project"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["fly", "flyctl"],
            rules: &[Rule {
                sub: &["destroy|delete|rm|remove"],
                anywhere: true,
                hit: hz(CODE, "deletes a Fly app, volume or machine"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["vercel"],
            rules: &[Rule {
                sub: &["remove|rm"],
                hit: hz(CODE, "`vercel remove` deletes deployments or a project"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["wrangler"],
            rules: &[Rule {
                sub: &["delete"],
                anywhere: true,
                hit: hz(
                    CODE,
                    "`wrangler … delete` deletes a Worker, database, bucket or namespace",
                ),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["supabase"],
            rules: &[
                Rule {
                    sub: &["db", "reset"],
                    hit: hz(CODE, "`supabase db reset` recreates the database"),
                    ..RULE
                },
                Rule {
                    sub: &["delete"],
                    anywhere: true,
                    hit: hz(CODE, "deletes a Supabase project or resource"),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["s3cmd"],
            rules: &[Rule {
                sub: &["rb|del|rm"],
                hit: hz(CODE, "`s3cmd rb/del` deletes buckets or objects"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["rclone"],
            valued: &["--config"],
            rules: &[Rule {
                sub: &["purge|delete|deletefile|rmdir|rmdirs|sync|cleanup|dedupe"],
                none: &[
                    Flag("--dry-run"),
                    Flag("-n"),
                    Word("--interactive"),
                    Flag("-i"),
                ],
                hit: hz(CODE, "`rclone purge/delete/sync` deletes remote files"),
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
    fn hazard_pack_cloud() {
        check(
            "cloud",
            &[
                "aws s3 rm s3://bucket --recursive",
                "aws s3 rm s3://bucket/file.txt",
                "aws s3 rb s3://bucket --force",
                "aws s3 sync . s3://site --delete",
                "aws s3api delete-bucket --bucket b",
                "aws ec2 terminate-instances --instance-ids i-1",
                "aws rds delete-db-instance --db-instance-identifier prod",
                "aws ecr batch-delete-image --repository-name r --image-ids imageTag=v1",
                "aws sqs purge-queue --queue-url https://sqs.example/q",
                "aws kms schedule-key-deletion --key-id k",
                "aws --profile prod s3 rm s3://b --recursive",
                "aws --region us-east-1 ec2 terminate-instances --instance-ids i-1",
                "aws.exe s3 rb s3://bucket --force",
                "gcloud projects delete my-project",
                "gcloud compute instances delete vm-1 --zone z",
                "gcloud --project prod compute instances delete vm-2",
                "gcloud storage rm --recursive gs://bucket",
                "gcloud.cmd projects delete p",
                "gsutil -m rm -r gs://bucket/x",
                "gsutil rb gs://bucket",
                "gsutil rsync -d -r . gs://bucket",
                "az group delete --name rg --yes",
                "az storage blob delete-batch -s c --account-name a",
                "az keyvault purge -n kv",
                "az.cmd group delete -n rg -y",
                "doctl compute droplet delete web-1",
                "heroku apps:destroy --app myapp --confirm myapp",
                "heroku pg:reset DATABASE_URL",
                "fly apps destroy myapp",
                "vercel remove my-app --yes",
                "netlify sites:delete abc",
                "firebase firestore:delete --all-collections",
                "wrangler d1 delete db",
                "supabase db reset",
                "s3cmd del --recursive --force s3://bucket",
                "rclone purge remote:bucket",
                "rclone sync ./site remote:site",
            ],
            &[
                "aws s3 ls",
                "aws s3 cp build.zip s3://bucket/releases/",
                "aws s3 sync dist s3://site",
                "aws s3 rm s3://bucket/old.txt --dryrun",
                "aws ec2 describe-instances",
                "aws ec2 terminate-instances --instance-ids i-1 --dry-run",
                "aws sts get-caller-identity",
                "aws dynamodb get-item --table-name t --key file://k.json",
                "aws --profile prod s3 ls",
                "gcloud compute instances list",
                "gcloud config set project p",
                "gcloud projects delete --help",
                "gsutil ls -r gs://bucket",
                "gsutil rsync -r . gs://bucket",
                "az group list",
                "az vm show -g rg -n vm1",
                "az group delete --help",
                "doctl compute droplet list",
                "heroku logs --tail -a myapp",
                "fly deploy",
                "vercel deploy",
                "netlify deploy --dir dist",
                "firebase deploy --only hosting",
                "wrangler deploy",
                "supabase status",
                "rclone copy ./site remote:site",
                "rclone sync --dry-run ./site remote:site",
            ],
        );
    }
}
