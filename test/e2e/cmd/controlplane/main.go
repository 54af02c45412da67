// Command controlplane is a multi-call binary that runs the pieces of a real
// Kubernetes control plane, each as its own process, for the distenv end-to-end
// tests:
//
//	controlplane etcd --data-dir DIR --client-url URL --peer-url URL
//	controlplane kube-apiserver [kube-apiserver flags]
//	controlplane kube-controller-manager [kube-controller-manager flags]
//	controlplane kubectl [kubectl arguments]
//	controlplane pki --dir DIR
//	controlplane freeport [N]
//	controlplane version
//
// The first argument picks the program; when the binary is invoked through a
// link named after a program (kube-apiserver, kubectl, ...) the link's name is
// used instead.
package main

import (
	"fmt"
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream's main packages do

	"distenv.dev/test/e2e/internal/multicall"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"

	_ "k8s.io/client-go/plugin/pkg/client/auth"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
)

const usage = `usage: controlplane PROGRAM [ARGS...]
programs: etcd, kube-apiserver, kube-controller-manager, kubectl, pki, freeport, version
`

func main() {
	prog, args, ok := multicall.Program("etcd", "kube-apiserver", "kube-controller-manager", "kubectl")
	if !ok {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}

	switch prog {
	case "etcd":
		os.Exit(runEtcd(args))
	case "kube-apiserver":
		multicall.Run(apiserverapp.NewAPIServerCommand(), args)
	case "kube-controller-manager":
		multicall.Run(kcmapp.NewControllerManagerCommand(), args)
	case "kubectl":
		logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args)) //nolint:errcheck
		cmd := kubectlcmd.NewDefaultKubectlCommand()
		cmd.SetArgs(args)
		if err := cli.RunNoErrOutput(cmd); err != nil {
			kubectlutil.CheckErr(err)
		}
		os.Exit(0)
	case "pki":
		os.Exit(runPKI(args))
	case "freeport":
		os.Exit(runFreePort(args))
	case "version":
		fmt.Println(version.Get().GitVersion)
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "controlplane: unknown program %q\n%s", prog, usage)
		os.Exit(2)
	}
}
