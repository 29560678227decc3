package main

import (
	"errors"
	"testing"
	"time"

	"github.com/spf13/viper"
	"github.com/stretchr/testify/require"
)

// TestSettingSourceMatchesViper: brick read settings through viper before;
// settingSource must give every flag the value viper gave it.
func TestSettingSourceMatchesViper(t *testing.T) {
	when := time.Date(2026, 12, 3, 21, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		env    map[string]string // BRICK_K, OS_K
		config map[string]any
	}{
		{name: "nothing"},
		{name: "env", env: map[string]string{"BRICK_K": "json"}},
		{name: "empty env is unset", env: map[string]string{"BRICK_K": ""}, config: map[string]any{"k": "yaml"}},
		{name: "first env wins", env: map[string]string{"BRICK_K": "a", "OS_K": "b"}},
		{name: "second env", env: map[string]string{"OS_K": "b c"}, config: map[string]any{"k": "x"}},
		{name: "env over config", env: map[string]string{"BRICK_K": "e"}, config: map[string]any{"k": "c"}},
		{name: "config string", config: map[string]any{"k": "a b\tc"}},
		{name: "config null", config: map[string]any{"k": nil}},
		{name: "config bool", config: map[string]any{"k": true}},
		{name: "config int", config: map[string]any{"k": 42}},
		{name: "config int64", config: map[string]any{"k": int64(1) << 40}},
		{name: "config uint64", config: map[string]any{"k": uint64(1) << 63}},
		{name: "config float", config: map[string]any{"k": 1.5}},
		{name: "config time", config: map[string]any{"k": when}},
		{name: "config error", config: map[string]any{"k": errors.New("e")}},
		{name: "config list", config: map[string]any{"k": []any{"ID", 2, true}}},
		{name: "config list of lists", config: map[string]any{"k": []any{"ID", []any{"x"}}}},
		{name: "config map", config: map[string]any{"k": map[string]any{"a": 1}}},
		{name: "other key", config: map[string]any{"other": "x"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			envs := []string{"BRICK_K", "OS_K"}
			for _, e := range envs {
				t.Setenv(e, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			vp := viper.New()
			require.NoError(t, vp.MergeConfigMap(tc.config))
			require.NoError(t, vp.BindEnv("k", "BRICK_K", "OS_K"))

			src := settingSource{config: tc.config}
			val, set := src.lookup("k", envs)
			require.Equal(t, vp.IsSet("k"), set)
			if !set {
				return
			}
			text, _ := settingString(val)
			require.Equal(t, vp.GetString("k"), text)
			require.Equal(t, vp.GetStringSlice("k"), settingStrings(val))
		})
	}
}
