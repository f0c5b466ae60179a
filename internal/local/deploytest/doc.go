// Package deploytest holds the invariants of the project's deployment
// artifact, template.yaml with its Makefile: timings (function timeout <
// lease < visibility timeout), redrive, alarms and their topic, the
// dashboard, least-privilege policies, and the wiring each function's
// configuration expects. Each failure names the invariant it breaks.
//
// It is tests only, but for Timing, the processor's timing rule that its
// crash tests check too. It lives behind the fence (internal/local) rather
// than in a root deploy/ folder: the module root's folders are the public
// packages a user imports (webhook, effects, stripeevent, processorfn,
// hookinboxtest), and these checks ship nothing. They read the template
// through internal/local/samtemplate, the same reader the local stack uses,
// so the stack and the checks cannot disagree about what the template says.
// The permissions are checked on the template the SAM transform makes of
// it (samtemplate.Translate, with the samtranslator package cfn-lint
// installs), which holds the roles as they are deployed.
package deploytest
