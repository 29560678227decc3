package factory

import (
	"fmt"
	"slices"
	"strings"
)

// Choice is a string flag that takes one of a fixed set, so a wrong
// value on the command line, in BRICK_* or in brick.yaml is a usage error
// naming its source before any work starts (not after a Cinder call).
type Choice struct {
	p       *string
	choices []string
}

// NewChoice sets *p to def and returns the flag value over it.
func NewChoice(p *string, def string, choices ...string) *Choice {
	*p = def
	return &Choice{p: p, choices: choices}
}

func (v *Choice) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

// Type is what help shows as the flag's argument, and what
// settings.Accepted turns into "want one of ...".
func (v *Choice) Type() string { return strings.Join(v.choices, "|") }

// Set accepts one of the choices.
func (v *Choice) Set(s string) error {
	if !slices.Contains(v.choices, s) {
		return fmt.Errorf("%q is not one of %s", s, strings.Join(v.choices, ", "))
	}
	*v.p = s
	return nil
}

// Choices are the accepted values, what completion offers.
func (v *Choice) Choices() []string { return v.choices }
