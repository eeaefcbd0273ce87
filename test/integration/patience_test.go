package integration

// patience multiplies eventually's timeouts. The package runs three tests at once on two busy
// cores, and under the race detector (make test-integration-race) the in-process operator,
// webhooks and emulator are slower still: a wait that takes seconds alone may take three times
// as long. Without the detector, at 1, CI saw a CVO upgrade miss its 90 s on a loaded machine.
const patience = 3
