package csi

import (
	"context"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// identity serves CSI's Identity service.
type identity struct {
	csipb.UnimplementedIdentityServer
	d *Driver
}

func (s identity) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	v := s.d.cfg.Version
	if v == "" {
		v = "dev"
	}
	return &csipb.GetPluginInfoResponse{Name: s.d.cfg.DriverName, VendorVersion: v}, nil
}

func (s identity) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	service := func(t csipb.PluginCapability_Service_Type) *csipb.PluginCapability {
		return &csipb.PluginCapability{Type: &csipb.PluginCapability_Service_{Service: &csipb.PluginCapability_Service{Type: t}}}
	}
	caps := []*csipb.PluginCapability{
		{Type: &csipb.PluginCapability_VolumeExpansion_{VolumeExpansion: &csipb.PluginCapability_VolumeExpansion{
			Type: csipb.PluginCapability_VolumeExpansion_ONLINE}}},
	}
	if s.d.controller() {
		caps = append(caps, service(csipb.PluginCapability_Service_CONTROLLER_SERVICE))
	}
	// Topology needs every node to report its zone: a node without one
	// does not claim it (the controller alone always does).
	if s.d.cfg.Zone != "" || s.d.cfg.Mode == ModeController {
		caps = append(caps, service(csipb.PluginCapability_Service_VOLUME_ACCESSIBILITY_CONSTRAINTS))
	}
	return &csipb.GetPluginCapabilitiesResponse{Capabilities: caps}, nil
}

func (s identity) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{Ready: wrapperspb.Bool(true)}, nil
}
