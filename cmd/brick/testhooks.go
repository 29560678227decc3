//go:build !e2e

package main

import "context"

// testHooks returns ctx: the shipped binary has no test hooks (see
// testhooks_e2e.go, built only with -tags e2e).
func (a *app) testHooks(ctx context.Context) context.Context { return ctx }
