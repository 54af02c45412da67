// Command node is a multi-call binary that runs the Kubernetes programs of one
// real node for the distenv node tier (test/e2e-node), each as its own process:
//
//	node kubelet [kubelet flags]
//	node kube-scheduler [kube-scheduler flags]
//	node kube-proxy [kube-proxy flags]
//	node version
//
// They come from the same k8s.io/kubernetes module as the control plane
// (cmd/controlplane), built apart from it so that the control plane's binary and
// cache key stay what the e2e tier already uses. As there, a link named after a
// program runs that program.
package main

import (
	"context"
	"fmt"
	"os"

	"distenv.dev/test/e2e/internal/multicall"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/component-base/version"
	proxyapp "k8s.io/kubernetes/cmd/kube-proxy/app"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubeletapp "k8s.io/kubernetes/cmd/kubelet/app"
)

const usage = `usage: node PROGRAM [ARGS...]
programs: kubelet, kube-scheduler, kube-proxy, version
`

func main() {
	prog, args, ok := multicall.Program("kubelet", "kube-scheduler", "kube-proxy")
	if !ok {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}

	switch prog {
	case "kubelet":
		multicall.Run(kubeletapp.NewKubeletCommand(context.Background()), args)
	case "kube-scheduler":
		multicall.Run(schedulerapp.NewSchedulerCommand(), args)
	case "kube-proxy":
		multicall.Run(proxyapp.NewProxyCommand(), args)
	case "version":
		fmt.Println(version.Get().GitVersion)
		os.Exit(0)
	default:
		fmt.Fprintf(os.Stderr, "node: unknown program %q\n%s", prog, usage)
		os.Exit(2)
	}
}
