//! Kubernetes and Helm: `kubectl delete`, `drain`, scaling to zero, forced
//! replace, `apply --prune`, `helm uninstall`, and deleting whole clusters
//! (kind, minikube, k3d, eksctl, kubeadm reset). `get`, `describe`, `logs`,
//! `apply`, `scale` to a positive count and every `--dry-run=client|server`
//! do not ask.

use super::Opt::{Flag, Val, Word};
use super::{PROGRAM, Pack, Program, RULE, Rule, hz};

const CODE: &str = "cluster-delete";

const VALUED: &[&str] = &[
    "-n",
    "--namespace",
    "--context",
    "--kubeconfig",
    "--cluster",
    "--user",
    "-s",
    "--server",
    "--token",
    "--as",
    "--as-group",
    "-l",
    "--selector",
    "-o",
    "--output",
    "--kube-context",
    "--request-timeout",
    "-v",
];

const DRY_RUN: &[super::Opt] = &[
    Val("--dry-run", &["client", "server", "true"]),
    Word("--dry-run"),
];

pub const PACK: Pack = Pack {
    name: "kubernetes",
    programs: &[
        Program {
            names: &["kubectl", "k", "oc", "kubecolor", "microk8s.kubectl"],
            valued: VALUED,
            rules: &[
                Rule {
                    sub: &["delete"],
                    none: DRY_RUN,
                    hit: hz(CODE, "`kubectl delete` deletes cluster resources"),
                    ..RULE
                },
                Rule {
                    sub: &["drain"],
                    none: DRY_RUN,
                    hit: hz(CODE, "`kubectl drain` evicts every pod from a node"),
                    ..RULE
                },
                Rule {
                    sub: &["scale"],
                    all: &[&[Val("--replicas", &["0"])]],
                    none: DRY_RUN,
                    hit: hz(CODE, "scales a workload to zero replicas"),
                    ..RULE
                },
                Rule {
                    sub: &["replace"],
                    all: &[&[Flag("--force")]],
                    none: DRY_RUN,
                    hit: hz(
                        CODE,
                        "`kubectl replace --force` deletes and re-creates resources",
                    ),
                    ..RULE
                },
                Rule {
                    sub: &["apply"],
                    all: &[&[Flag("--prune")]],
                    none: DRY_RUN,
                    hit: hz(
                        CODE,
                        "`kubectl apply --prune` deletes resources missing from the manifests",
                    ),
                    ..RULE
                },
            ],
            ..PROGRAM
        },
        Program {
            names: &["helm"],
            valued: VALUED,
            rules: &[Rule {
                sub: &["uninstall|delete|del|un"],
                none: &[Flag("--dry-run")],
                hit: hz(CODE, "`helm uninstall` deletes a release's resources"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["kind", "minikube", "eksctl"],
            valued: &["-p", "--profile", "--name"],
            rules: &[Rule {
                sub: &["delete"],
                hit: hz(CODE, "deletes a Kubernetes cluster"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["k3d"],
            rules: &[Rule {
                sub: &["cluster|node|registry", "delete|rm"],
                hit: hz(CODE, "deletes a k3d cluster"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["kubeadm"],
            rules: &[Rule {
                sub: &["reset"],
                hit: hz(CODE, "`kubeadm reset` tears down the node's cluster state"),
                ..RULE
            }],
            ..PROGRAM
        },
        Program {
            names: &["argocd", "flux", "velero", "istioctl", "linkerd"],
            rules: &[Rule {
                sub: &["delete|uninstall"],
                anywhere: true,
                hit: hz(CODE, "deletes cluster applications, backups or the mesh"),
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
    fn hazard_pack_kubernetes() {
        check(
            "kubernetes",
            &[
                "kubectl delete pod web-1",
                "kubectl delete ns prod",
                "kubectl delete -f deploy.yaml",
                "kubectl -n prod delete svc api",
                "kubectl --context prod delete deploy api",
                "kubectl --kubeconfig ~/.kube/prod delete pod x",
                "kubectl delete pod x --grace-period=0 --force",
                "kubectl delete pod x --dry-run=none",
                "kubectl drain node-1 --ignore-daemonsets",
                "kubectl scale deployment api --replicas=0",
                "kubectl scale deploy/web --replicas 0 -n prod",
                "kubectl replace --force -f pod.yaml",
                "kubectl apply --prune -l app=web -f manifests/",
                "kubectl.exe delete ns prod",
                "oc delete project demo",
                "helm uninstall web",
                "helm --namespace prod uninstall api",
                "helm del web --purge",
                "kind delete cluster",
                "minikube delete --all --purge",
                "k3d cluster delete dev",
                "eksctl delete cluster --name prod",
                "kubeadm reset -f",
                "argocd app delete web",
                "velero backup delete nightly",
            ],
            &[
                "kubectl get pods",
                "kubectl -n prod get svc",
                "kubectl describe pod web-1",
                "kubectl logs -f deploy/api -n prod",
                "kubectl apply -f deploy.yaml",
                "kubectl scale deployment api --replicas=3",
                "kubectl auth can-i delete pods",
                "kubectl get pods -l app=delete-me",
                "kubectl get pod delete-job-1",
                "kubectl delete --help",
                "kubectl delete pod x --dry-run=client",
                "kubectl drain node-1 --dry-run=client",
                "kubectl uncordon node-1",
                "helm list -A",
                "helm upgrade --install web ./chart",
                "helm uninstall web --dry-run",
                "kind get clusters",
                "minikube status",
                "k3d cluster list",
                "argocd app list",
            ],
        );
    }
}
