// Package fc attaches Cinder volumes over Fibre Channel (driver_volume_type
// "fibre_channel"), on real HBAs and on software FCoE alike, single path or
// through dm-multipath over several HBAs and target ports.
//
// What it does, in order:
//
//  1. validate the connection info (ParseInfo): target WWPNs (target_wwn as
//     a string or list, or target_wwns), LUNs (target_lun or target_luns),
//     initiator_target_map, access_mode, addressing_mode,
//     enable_wildcard_scan;
//  2. list the host's HBAs from /sys/class/fc_host and keep those whose
//     port_state is Online and, when initiator_target_map is given, only
//     the initiators it names;
//  3. map each target WWPN to the SCSI channel and target number the HBA
//     gave that remote port (/sys/class/fc_transport/targetH:C:T/port_name,
//     or /sys/class/fc_remote_ports/rport-H:C-N/port_name + scsi_target_id
//     when no SCSI target exists yet) and write exactly "C T L" to
//     /sys/class/scsi_host/hostH/scan;
//  4. find the disk through sysfs (H:C:T:L -> block device), and through
//     /dev/disk/by-path/pci-<pci>-fc-0x<wwpn>-lun-<lun> when udev made that
//     link (it does not for FCoE on a virtual net device, hence sysfs first);
//     the wait wakes on /dev events and polls sysfs with a bounded backoff;
//  5. check that every path shows the same WWID and sits behind a requested
//     target port, then hand the paths to dm-multipath (package multipath)
//     exactly as the iSCSI connector does.
//
// Disconnect finds the same devices again (checking their WWID against the
// device Connect returned), refuses while the volume is mounted or open
// unless forced, flushes, removes the multipath map, deletes every path's
// SCSI device and forgets the WWID. Detaching what is already gone succeeds.
//
// # Why enable_wildcard_scan is off by default
//
// os-brick falls back to a "- - L" scan (every channel and target of every
// HBA) when it cannot find the target port in sysfs, unless the driver sets
// enable_wildcard_scan to false. brick inverts that default. A wildcard scan
// probes LUN L behind every array zoned to the host, so a host zoned to
// several arrays picks up other volumes that merely share the LUN number -
// devices nobody asked for, which multipathd then builds maps on and which
// later block those volumes' detach elsewhere. The target port missing from
// sysfs usually means the fabric login has not finished (or the zoning is
// wrong), and brick waits for the port to appear instead, bounded by the
// device timeout. Drivers for arrays whose ports never show up in sysfs can
// still ask for the broad scan with "enable_wildcard_scan": true.
package fc
