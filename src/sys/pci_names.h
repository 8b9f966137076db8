/* Human names of PCI devices from the system's pci.ids, through libpci.
 *
 * Used for devices other than NVIDIA GPUs (NICs, NVMe, bridges in evidence and
 * topology); GPU names come from gpuvet's own table, since distribution pci.ids files
 * lag new GPUs. Names are reference data, not facts of the machine under --root. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Write "Vendor Device" into buf; returns 0, or -ENOENT when pci.ids does not know the
 * device (buf then holds "vvvv:dddd"). */
int pci_names_lookup(uint16_t vendor, uint16_t device, char *buf, size_t size);
