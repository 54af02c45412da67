// Package multicall holds what the e2e tiers' multi-call binaries (cmd/controlplane,
// cmd/node) share: picking the program to run and running a Kubernetes command.
package multicall

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
)

// Program returns the program to run and its arguments: the name the binary was
// invoked by when it is one of linked (a link named after a program), else the
// first argument. It sets os.Args to the program's own view, as the cobra
// commands read it. ok is false when no program is named.
func Program(linked ...string) (prog string, args []string, ok bool) {
	prog, args = filepath.Base(os.Args[0]), os.Args[1:]
	if !slices.Contains(linked, prog) {
		if len(args) == 0 {
			return "", nil, false
		}
		prog, args = args[0], args[1:]
	}
	os.Args = append([]string{prog}, args...)
	return prog, args, true
}

// Run runs a Kubernetes command with args and exits with its status.
func Run(cmd *cobra.Command, args []string) {
	cmd.SetArgs(args)
	os.Exit(cli.Run(cmd))
}
