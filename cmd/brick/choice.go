package main

import (
	"fmt"
	"slices"
	"strings"
)

// choiceValue is a string flag that takes one of a fixed set, so a wrong
// value on the command line, in BRICK_* or in brick.yaml is a usage error
// naming its source before any work starts (not after a Cinder call).
type choiceValue struct {
	p       *string
	choices []string
}

// newChoice sets *p to def and returns the flag value over it.
func newChoice(p *string, def string, choices ...string) *choiceValue {
	*p = def
	return &choiceValue{p: p, choices: choices}
}

func (v *choiceValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

// Type is what help shows as the flag's argument, and what
// acceptedValues turns into "want one of ...".
func (v *choiceValue) Type() string { return strings.Join(v.choices, "|") }

func (v *choiceValue) Set(s string) error {
	if !slices.Contains(v.choices, s) {
		return fmt.Errorf("%q is not one of %s", s, strings.Join(v.choices, ", "))
	}
	*v.p = s
	return nil
}

// Choices are the accepted values, what completion offers.
func (v *choiceValue) Choices() []string { return v.choices }
