#include "sys/dcb.h"
#include "core/clock.h"

#include <errno.h>
#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Netlink attributes are walked by hand, bounds-checked at every step: the answer is a
 * few hundred bytes and libmnl would be a dependency for two loops. */
static const struct nlattr *attr_find(const void *start, size_t len, unsigned type) {
        const char *p = start;
        while (len >= NLA_HDRLEN) {
                const struct nlattr *a = (const struct nlattr *)p;
                if (a->nla_len < NLA_HDRLEN || a->nla_len > len)
                        return NULL;
                if ((a->nla_type & NLA_TYPE_MASK) == type)
                        return a;
                size_t step = NLA_ALIGN(a->nla_len);
                if (step >= len)
                        return NULL;
                p += step;
                len -= step;
        }
        return NULL;
}

static int parse_message(const struct nlmsghdr *h, struct dcb_pfc *ret) {
        if (h->nlmsg_type == NLMSG_ERROR) {
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                        return -EINVAL;
                const struct nlmsgerr *e = NLMSG_DATA(h);
                /* error 0 is an acknowledgement, not an answer */
                return e->error < 0 && e->error > -4096 ? e->error : -EINVAL;
        }
        if (h->nlmsg_type != RTM_GETDCB || h->nlmsg_len < NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct dcbmsg))))
                return -EINVAL;
        if (((const struct dcbmsg *)NLMSG_DATA(h))->cmd != DCB_CMD_IEEE_GET)
                return -EINVAL;
        const char *attrs = (const char *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct dcbmsg));
        size_t attrs_len = h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(sizeof(struct dcbmsg)));
        const struct nlattr *ieee = attr_find(attrs, attrs_len, DCB_ATTR_IEEE);
        if (!ieee)
                return -EOPNOTSUPP;
        const struct nlattr *pfc =
                attr_find((const char *)ieee + NLA_HDRLEN, ieee->nla_len - NLA_HDRLEN, DCB_ATTR_IEEE_PFC);
        if (!pfc)
                return -EOPNOTSUPP;
        struct ieee_pfc v;
        if ((size_t)pfc->nla_len - NLA_HDRLEN < sizeof(v))
                return -EINVAL;
        memcpy(&v, (const char *)pfc + NLA_HDRLEN, sizeof(v));
        ret->enabled = v.pfc_en;
        ret->capable = v.pfc_cap;
        return 0;
}

int dcb_parse_ieee_reply(const void *buf, size_t len, struct dcb_pfc *ret) {
        const char *p = buf;
        int last = -EINVAL;
        while (len >= NLMSG_HDRLEN) {
                const struct nlmsghdr *h = (const struct nlmsghdr *)p;
                if (h->nlmsg_len < NLMSG_HDRLEN || h->nlmsg_len > len)
                        return -EINVAL;
                struct dcb_pfc v;
                int r = parse_message(h, &v);
                if (r == 0) {
                        *ret = v;
                        return 0;
                }
                last = r;
                size_t step = NLMSG_ALIGN(h->nlmsg_len);
                if (step >= len)
                        break;
                p += step;
                len -= step;
        }
        return last;
}

int dcb_read_pfc(const char *ifname, int timeout_ms, struct dcb_pfc *ret) {
        size_t name_len = strlen(ifname);
        if (name_len == 0 || name_len >= 16 /* IFNAMSIZ */)
                return -ENODEV;
        struct {
                struct nlmsghdr h;
                struct dcbmsg d;
                char attrs[NLA_HDRLEN + NLA_ALIGN(16)];
        } req;
        memset(&req, 0, sizeof(req));
        struct nlattr *name = (struct nlattr *)req.attrs;
        name->nla_type = DCB_ATTR_IFNAME;
        name->nla_len = (uint16_t)(NLA_HDRLEN + name_len + 1);
        memcpy(req.attrs + NLA_HDRLEN, ifname, name_len + 1);
        req.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct dcbmsg)) + NLA_ALIGN(name->nla_len);
        req.h.nlmsg_type = RTM_GETDCB;
        req.h.nlmsg_flags = NLM_F_REQUEST;
        req.h.nlmsg_seq = 1;
        req.d.dcb_family = AF_UNSPEC;
        req.d.cmd = DCB_CMD_IEEE_GET;

        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
        if (fd < 0)
                return -errno;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        int r;
        if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
                r = -errno;
                close(fd);
                return r;
        }
        unsigned long long start_ms = deadline_now_ms();
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        for (;;) {
                long left = timeout_ms - (long)(deadline_now_ms() - start_ms);
                struct pollfd pfd = {.fd = fd, .events = POLLIN};
                int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n == 0 ? -ETIMEDOUT : -errno;
                        break;
                }
                ssize_t got = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (got < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        r = -errno;
                        break;
                }
                /* Only our request's answer counts; the socket hears nothing else. */
                if ((size_t)got >= NLMSG_HDRLEN && ((const struct nlmsghdr *)buf)->nlmsg_seq != req.h.nlmsg_seq)
                        continue;
                r = dcb_parse_ieee_reply(buf, (size_t)got, ret);
                break;
        }
        close(fd);
        return r;
}
