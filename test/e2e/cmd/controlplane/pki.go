package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// runPKI writes a fresh CA and the certificates and keys the control plane
// needs into DIR:
//
//	ca.crt ca.key                 cluster CA (serving and client certificates)
//	apiserver.crt apiserver.key   kube-apiserver serving certificate
//	admin.crt admin.key           client certificate in group system:masters
//	kcm.crt kcm.key               client certificate system:kube-controller-manager
//	sa.key sa.pub                 service-account token signing key pair
//
// With --node NAME, also the identities of one node (test/e2e-node):
//
//	kubelet.crt kubelet.key       client certificate system:node:NAME in system:nodes
//	kubelet-serving.crt .key      the kubelet's serving certificate for --ip
//	scheduler.crt scheduler.key   client certificate system:kube-scheduler
//	proxy.crt proxy.key           client certificate system:kube-proxy
func runPKI(args []string) int {
	fs := flag.NewFlagSet("pki", flag.ContinueOnError)
	dir := fs.String("dir", "", "output directory (required)")
	serviceIP := fs.String("service-ip", "10.0.0.1", "first IP of the service range (the kubernetes Service)")
	address := fs.String("ip", "127.0.0.1", "address the API server serves on (a node's bridge address in the node tier)")
	node := fs.String("node", "", "also issue the certificates of the node NAME (kubelet, kube-scheduler, kube-proxy)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "pki: --dir is required")
		return 2
	}
	if err := writePKI(*dir, net.ParseIP(*serviceIP), net.ParseIP(*address), *node); err != nil {
		fmt.Fprintf(os.Stderr, "pki: %v\n", err)
		return 1
	}
	return 0
}

func writePKI(dir string, serviceIP, address net.IP, node string) error {
	if serviceIP == nil {
		return fmt.Errorf("bad --service-ip")
	}
	if address == nil {
		return fmt.Errorf("bad --ip")
	}
	ips := []net.IP{net.ParseIP("127.0.0.1"), serviceIP}
	if !address.Equal(ips[0]) {
		ips = append(ips, address)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "distenv-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	if err := writeCert(filepath.Join(dir, "ca.crt"), caDER); err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "ca.key"), caKey); err != nil {
		return err
	}

	serial := int64(2)
	issue := func(name string, subject pkix.Name, usage x509.ExtKeyUsage, dns []string, ips []net.IP) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      subject,
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(7 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			DNSNames:     dns,
			IPAddresses:  ips,
		}
		serial++
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		if err := writeCert(filepath.Join(dir, name+".crt"), der); err != nil {
			return err
		}
		return writeKey(filepath.Join(dir, name+".key"), key)
	}

	if err := issue("apiserver", pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth,
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
		ips); err != nil {
		return err
	}
	if err := issue("admin", pkix.Name{CommonName: "distenv-e2e-admin", Organization: []string{"system:masters"}},
		x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return err
	}
	if err := issue("kcm", pkix.Name{CommonName: "system:kube-controller-manager"},
		x509.ExtKeyUsageClientAuth, nil, nil); err != nil {
		return err
	}

	if node != "" {
		for _, c := range []struct {
			name    string
			subject pkix.Name
			usage   x509.ExtKeyUsage
			ips     []net.IP
		}{
			{"kubelet", pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
				x509.ExtKeyUsageClientAuth, nil},
			{"kubelet-serving", pkix.Name{CommonName: node}, x509.ExtKeyUsageServerAuth, []net.IP{address}},
			{"scheduler", pkix.Name{CommonName: "system:kube-scheduler"}, x509.ExtKeyUsageClientAuth, nil},
			{"proxy", pkix.Name{CommonName: "system:kube-proxy"}, x509.ExtKeyUsageClientAuth, nil},
		} {
			var dns []string
			if c.ips != nil {
				dns = []string{node}
			}
			if err := issue(c.name, c.subject, c.usage, dns, c.ips); err != nil {
				return err
			}
		}
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), saKey); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func writeCert(path string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
}

// runFreePort prints N distinct free TCP ports on 127.0.0.1, one per line.
// All listeners are held open until every port is chosen, so the N differ.
func runFreePort(args []string) int {
	n := 1
	if len(args) > 0 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v < 1 || v > 64 {
			fmt.Fprintf(os.Stderr, "freeport: bad count %q (1..64)\n", args[0])
			return 2
		}
		n = v
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintf(os.Stderr, "freeport: %v\n", err)
			return 1
		}
		ls = append(ls, l)
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
	}
	return 0
}
