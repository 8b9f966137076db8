/* Human names of PCI devices from the system's pci.ids, through libpci.
 *
 * Used for devices other than NVIDIA GPUs (NICs, NVMe, bridges in evidence and
 * topology); GPU names come from gpuvet's own table, since distribution pci.ids files
 * lag new GPUs. Names are reference data, not facts of the machine under --root: they come
 * from the system's pci.ids, or from the file named by $GPUVET_PCI_IDS (tests use a small
 * one of their own, so expected output does not change with the distribution's copy). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Write "Vendor Device" into buf; returns 0, or -ENOENT when pci.ids does not know the
 * device (buf then holds "vvvv:dddd"). */
int pci_names_lookup(uint16_t vendor, uint16_t device, char *buf, size_t size);
