package devstack

import "syscall"

// setParentDeathSignal makes Linux kill the child when the thread that
// started it exits, which for a Go program means when the process exits: a
// backstop for processes that cannot watch a pipe, like aws-lambda-rie.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
