//go:build !race

package integration

// patience multiplies eventually's timeouts (see race_on_test.go).
const patience = 1
