// Package adopttest runs docs/adopting.md's commands as a team would: in
// a fresh module outside the repository, as a user who is not root, with
// hookinbox in Go's read-only module cache (served from this checkout's
// committed tree by a file proxy). It is tests only.
package adopttest
