/* Data Center Bridging settings of a network interface from the kernel's dcbnl netlink
 * interface (RTM_GETDCB, DCB_CMD_IEEE_GET: what `dcb pfc show dev IF` prints): which of the
 * eight priorities have Priority Flow Control on, the link-level flow control RoCE relies
 * on to be lossless. Only a driver with DCB support answers (mlx5 does); others say
 * -EOPNOTSUPP. Reading needs no privileges. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct dcb_pfc {
        uint8_t enabled; /* bit p: PFC on priority p */
        uint8_t capable; /* how many traffic classes may have PFC on (pfc_cap) */
};

/* Ask the kernel for interface ifname's IEEE PFC settings, waiting at most timeout_ms.
 * 0 with ret filled; -EOPNOTSUPP where the driver has no DCB support or no PFC; -ENODEV
 * for an unknown interface; -ETIMEDOUT; another -errno. */
int dcb_read_pfc(const char *ifname, int timeout_ms, struct dcb_pfc *ret);

/* Parse the kernel's answer to DCB_CMD_IEEE_GET (one or more netlink messages, len bytes
 * at buf): 0 with ret filled, -errno from an error message, -EOPNOTSUPP when the answer
 * has no PFC attribute, -EINVAL for a malformed answer. Pure; fuzzed. */
int dcb_parse_ieee_reply(const void *buf, size_t len, struct dcb_pfc *ret);
