//go:build race

package integration

// patience multiplies eventually's timeouts: the race detector slows the in-process operator,
// webhooks and emulator several times over.
const patience = 3
