//go:build !linux

package devstack

import "syscall"

// setParentDeathSignal does nothing where there is no parent death signal;
// a Function then relies on Stop.
func setParentDeathSignal(*syscall.SysProcAttr) {}
