package testbed

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTgtNexus(t *testing.T) {
	out := `Target 1: iqn.2010-10.org.openstack:volume-a
    System information:
        Driver: iscsi
        State: ready
    I_T nexus information:
        I_T nexus: 3
            Initiator: iqn.1993-08.org.debian:01:guest alias: brick-guest
            Connection: 0
                IP Address: 127.0.0.1
        I_T nexus: 4
            Initiator: iqn.1993-08.org.debian:01:guest alias: brick-guest
    LUN information:
        LUN: 0
Target 2: iqn.2010-10.org.openstack:volume-b
    System information:
        Driver: iscsi
    I_T nexus information:
    LUN information:
`
	require.Equal(t, map[string]int{
		"iqn.2010-10.org.openstack:volume-a": 2,
		"iqn.2010-10.org.openstack:volume-b": 0,
	}, parseTgtNexus(out))
	require.Empty(t, parseTgtNexus(""))
	require.Empty(t, parseTgtNexus("I_T nexus: 1\n"), "a nexus outside any target is not counted")
}

func TestVolumeLog(t *testing.T) {
	var none *volumeLog // a Cinder value not made by StartCinder
	none.add("x")
	none.forget("x")
	require.Nil(t, none.list())

	l := &volumeLog{}
	l.add("a")
	l.add("b")
	l.add("a")
	require.Equal(t, []string{"a", "b"}, l.list())
	l.forget("a")
	require.Equal(t, []string{"b"}, l.list())
}
