// Command cert-manager runs cert-manager's controllers (the ones a self-signed
// and a CA Issuer need) and its CA injector against a kubeconfig, built from the
// github.com/cert-manager/cert-manager module: its own commands are modules
// that the Go module proxy does not serve.
//
//	cert-manager controller --kubeconfig FILE
//	cert-manager cainjector --kubeconfig FILE
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/util"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cert-manager controller|cainjector --kubeconfig FILE")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file")
	_ = fs.Parse(os.Args[2:])
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "controller":
		err = runController(ctx, *kubeconfig)
	case "cainjector":
		err = runInjector(ctx, *kubeconfig)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cert-manager %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// The controllers that issue a Certificate from a self-signed or a CA Issuer.
var controllers = []string{
	issuers.ControllerName,
	trigger.ControllerName, issuing.ControllerName, keymanager.ControllerName,
	requestmanager.ControllerName, readiness.ControllerName, revisionmanager.ControllerName,
	approver.ControllerName, crselfsigned.CRControllerName, crca.CRControllerName,
}

func runController(ctx context.Context, kubeconfig string) error {
	f, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig: kubeconfig, KubernetesAPIQPS: 50, KubernetesAPIBurst: 100,
		IssuerOptions: controller.IssuerOptions{ClusterResourceNamespace: "cert-manager"},
	})
	if err != nil {
		return err
	}
	c, err := f.Build()
	if err != nil {
		return err
	}
	errs := make(chan error, len(controllers))
	for _, name := range controllers {
		fn, ok := controller.Known()[name]
		if !ok {
			return fmt.Errorf("controller %s not registered", name)
		}
		iface, err := fn(f)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		go func(name string) {
			if err := iface.Run(2, ctx); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}(name)
	}
	c.KubeSharedInformerFactory.Start(ctx.Done())
	c.SharedInformerFactory.Start(ctx.Done())
	c.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "cert-manager controller: running %v\n", controllers)
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		return err
	}
}

func runInjector(ctx context.Context, kubeconfig string) error {
	ctrl.SetLogger(klog.NewKlogr())
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// The user agent names the field manager of the injector's apply patches.
	cfg = util.RestConfigWithUserAgent(cfg, "cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Client:                 client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "cert-manager cainjector: running (webhook configurations)")
	return mgr.Start(ctx)
}
