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
//     target port, then hand the paths to dm-multipath (multipath.Assemble)
//     exactly as the iSCSI connector does.
//
// Disconnect finds the same devices again (checking their WWID against the
// device Connect returned) and hands them to multipath.Teardown: refuse
// while the volume is mounted or open unless forced, flush, remove the
// multipath map, delete every path's SCSI device and forget the WWID.
// Detaching what is already gone succeeds.
//
// enable_wildcard_scan is off unless the info says true: a "- - L" scan
// would pick up other arrays' volumes that share the LUN number
// (docs/scsi-multipath.md).
package fc
