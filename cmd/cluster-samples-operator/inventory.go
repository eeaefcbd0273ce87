package main

import "github.com/spf13/cobra"

// newInventoryCommand is filled in by the inventory work.
func newInventoryCommand() *cobra.Command {
	return &cobra.Command{Use: "inventory", Short: "Inspect the embedded sample inventory"}
}
