package main

import (
	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func newOperatorCommand() *cobra.Command {
	var kubeconfig string
	cmd := &cobra.Command{
		Use:   "operator",
		Short: "Run the samples operator",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
				&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, nil).ClientConfig()
			if err != nil {
				return err
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			v, err := client.Discovery().ServerVersion()
			if err != nil {
				return err
			}
			klog.InfoS("Connected to the API server", "version", v.GitVersion)
			klog.InfoS("Waiting for work")
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "path to a kubeconfig; empty means in-cluster")
	return cmd
}
