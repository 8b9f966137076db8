/* Our own declarations of the subset of libibverbs (rdma-core) gpuvet calls, so that no
 * rdma-core headers are needed to build (as cuda_api.h does for the driver API). Names,
 * values and layouts are those of <infiniband/verbs.h> (rdma-core 44, Debian 12); the
 * structures below have kept their layout since libibverbs 1.1 (2007), the ABI every
 * rdma-core still exports.
 *
 * Why layouts and not opaque handles: verbs.h makes ibv_post_send and ibv_poll_cq inline
 * calls through the context's function table (qp->context->ops.post_send,
 * cq->context->ops.poll_cq), so gpuvet reads ibv_qp, ibv_cq and ibv_context itself. Only the
 * structures it reads or fills are declared in full; the others are opaque.
 * tests/abi/verbs_*.c compares every item below with the official header when it is
 * installed (libibverbs-dev); the function list is verbs_functions.def. */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Opaque here. */
struct ibv_device;
struct ibv_comp_channel;
struct ibv_srq;
struct ibv_ah;
struct ibv_mw;
struct ibv_mw_bind;
struct ibv_recv_wr;
struct ibv_device_attr;
/* ibv_query_port's exported symbol takes the 1.1 layout of ibv_port_attr under this name;
 * it is ibv_port_attr's first fields (verbs.h casts one to the other), so gpuvet hands it a
 * zeroed ibv_port_attr. */
struct _compat_ibv_port_attr;

union ibv_gid {
        uint8_t raw[16];
        struct {
                unsigned long long subnet_prefix; /* __be64 */
                unsigned long long interface_id;  /* __be64 */
        } global;
};

enum ibv_gid_type {
        IBV_GID_TYPE_IB,
        IBV_GID_TYPE_ROCE_V1,
        IBV_GID_TYPE_ROCE_V2,
};

struct ibv_gid_entry {
        union ibv_gid gid;
        uint32_t gid_index;
        uint32_t port_num;
        uint32_t gid_type; /* enum ibv_gid_type */
        uint32_t ndev_ifindex;
};

enum ibv_mtu {
        IBV_MTU_256 = 1,
        IBV_MTU_512 = 2,
        IBV_MTU_1024 = 3,
        IBV_MTU_2048 = 4,
        IBV_MTU_4096 = 5
};

enum ibv_port_state {
        IBV_PORT_NOP = 0,
        IBV_PORT_DOWN = 1,
        IBV_PORT_INIT = 2,
        IBV_PORT_ARMED = 3,
        IBV_PORT_ACTIVE = 4,
        IBV_PORT_ACTIVE_DEFER = 5
};

enum {
        IBV_LINK_LAYER_UNSPECIFIED,
        IBV_LINK_LAYER_INFINIBAND,
        IBV_LINK_LAYER_ETHERNET,
};

struct ibv_port_attr {
        enum ibv_port_state state;
        enum ibv_mtu max_mtu;
        enum ibv_mtu active_mtu;
        int gid_tbl_len;
        uint32_t port_cap_flags;
        uint32_t max_msg_sz;
        uint32_t bad_pkey_cntr;
        uint32_t qkey_viol_cntr;
        uint16_t pkey_tbl_len;
        uint16_t lid;
        uint16_t sm_lid;
        uint8_t lmc;
        uint8_t max_vl_num;
        uint8_t sm_sl;
        uint8_t subnet_timeout;
        uint8_t init_type_reply;
        uint8_t active_width; /* 1: 1x, 2: 4x, 4: 8x, 8: 12x, 16: 2x */
        uint8_t active_speed; /* 1 SDR, 2 DDR, 4 QDR, 8 FDR10, 16 FDR, 32 EDR, 64 HDR, 128 NDR */
        uint8_t phys_state;
        uint8_t link_layer;
        uint8_t flags;
        uint16_t port_cap_flags2;
};

enum ibv_wc_status {
        IBV_WC_SUCCESS,
        IBV_WC_LOC_LEN_ERR,
        IBV_WC_LOC_QP_OP_ERR,
        IBV_WC_LOC_EEC_OP_ERR,
        IBV_WC_LOC_PROT_ERR,
        IBV_WC_WR_FLUSH_ERR,
        IBV_WC_MW_BIND_ERR,
        IBV_WC_BAD_RESP_ERR,
        IBV_WC_LOC_ACCESS_ERR,
        IBV_WC_REM_INV_REQ_ERR,
        IBV_WC_REM_ACCESS_ERR,
        IBV_WC_REM_OP_ERR,
        IBV_WC_RETRY_EXC_ERR,
        IBV_WC_RNR_RETRY_EXC_ERR,
        IBV_WC_LOC_RDD_VIOL_ERR,
        IBV_WC_REM_INV_RD_REQ_ERR,
        IBV_WC_REM_ABORT_ERR,
        IBV_WC_INV_EECN_ERR,
        IBV_WC_INV_EEC_STATE_ERR,
        IBV_WC_FATAL_ERR,
        IBV_WC_RESP_TIMEOUT_ERR,
        IBV_WC_GENERAL_ERR,
        IBV_WC_TM_ERR,
        IBV_WC_TM_RNDV_INCOMPLETE,
};

enum ibv_wc_opcode {
        IBV_WC_SEND,
        IBV_WC_RDMA_WRITE,
        IBV_WC_RDMA_READ,
};

struct ibv_wc {
        uint64_t wr_id;
        enum ibv_wc_status status;
        enum ibv_wc_opcode opcode;
        uint32_t vendor_err;
        uint32_t byte_len;
        union {
                uint32_t imm_data; /* big endian */
                uint32_t invalidated_rkey;
        };
        uint32_t qp_num;
        uint32_t src_qp;
        unsigned int wc_flags;
        uint16_t pkey_index;
        uint16_t slid;
        uint8_t sl;
        uint8_t dlid_path_bits;
};

enum ibv_access_flags {
        IBV_ACCESS_LOCAL_WRITE = 1,
        IBV_ACCESS_REMOTE_WRITE = (1 << 1),
        IBV_ACCESS_REMOTE_READ = (1 << 2),
};

struct ibv_context;
struct ibv_pd {
        struct ibv_context *context;
        uint32_t handle;
};

struct ibv_mr {
        struct ibv_context *context;
        struct ibv_pd *pd;
        void *addr;
        size_t length;
        uint32_t handle;
        uint32_t lkey;
        uint32_t rkey;
};

enum ibv_qp_type {
        IBV_QPT_RC = 2,
        IBV_QPT_UC,
        IBV_QPT_UD,
};

struct ibv_qp_cap {
        uint32_t max_send_wr;
        uint32_t max_recv_wr;
        uint32_t max_send_sge;
        uint32_t max_recv_sge;
        uint32_t max_inline_data;
};

struct ibv_cq;
struct ibv_qp_init_attr {
        void *qp_context;
        struct ibv_cq *send_cq;
        struct ibv_cq *recv_cq;
        struct ibv_srq *srq;
        struct ibv_qp_cap cap;
        enum ibv_qp_type qp_type;
        int sq_sig_all;
};

enum ibv_qp_attr_mask {
        IBV_QP_STATE = 1 << 0,
        IBV_QP_CUR_STATE = 1 << 1,
        IBV_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
        IBV_QP_ACCESS_FLAGS = 1 << 3,
        IBV_QP_PKEY_INDEX = 1 << 4,
        IBV_QP_PORT = 1 << 5,
        IBV_QP_QKEY = 1 << 6,
        IBV_QP_AV = 1 << 7,
        IBV_QP_PATH_MTU = 1 << 8,
        IBV_QP_TIMEOUT = 1 << 9,
        IBV_QP_RETRY_CNT = 1 << 10,
        IBV_QP_RNR_RETRY = 1 << 11,
        IBV_QP_RQ_PSN = 1 << 12,
        IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
        IBV_QP_ALT_PATH = 1 << 14,
        IBV_QP_MIN_RNR_TIMER = 1 << 15,
        IBV_QP_SQ_PSN = 1 << 16,
        IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
        IBV_QP_PATH_MIG_STATE = 1 << 18,
        IBV_QP_CAP = 1 << 19,
        IBV_QP_DEST_QPN = 1 << 20,
        IBV_QP_RATE_LIMIT = 1 << 25,
};

enum ibv_qp_state {
        IBV_QPS_RESET,
        IBV_QPS_INIT,
        IBV_QPS_RTR,
        IBV_QPS_RTS,
        IBV_QPS_SQD,
        IBV_QPS_SQE,
        IBV_QPS_ERR,
        IBV_QPS_UNKNOWN
};

enum ibv_mig_state {
        IBV_MIG_MIGRATED,
        IBV_MIG_REARM,
        IBV_MIG_ARMED
};

struct ibv_global_route {
        union ibv_gid dgid;
        uint32_t flow_label;
        uint8_t sgid_index;
        uint8_t hop_limit;
        uint8_t traffic_class;
};

struct ibv_ah_attr {
        struct ibv_global_route grh;
        uint16_t dlid;
        uint8_t sl;
        uint8_t src_path_bits;
        uint8_t static_rate;
        uint8_t is_global;
        uint8_t port_num;
};

struct ibv_qp_attr {
        enum ibv_qp_state qp_state;
        enum ibv_qp_state cur_qp_state;
        enum ibv_mtu path_mtu;
        enum ibv_mig_state path_mig_state;
        uint32_t qkey;
        uint32_t rq_psn;
        uint32_t sq_psn;
        uint32_t dest_qp_num;
        unsigned int qp_access_flags;
        struct ibv_qp_cap cap;
        struct ibv_ah_attr ah_attr;
        struct ibv_ah_attr alt_ah_attr;
        uint16_t pkey_index;
        uint16_t alt_pkey_index;
        uint8_t en_sqd_async_notify;
        uint8_t sq_draining;
        uint8_t max_rd_atomic;
        uint8_t max_dest_rd_atomic;
        uint8_t min_rnr_timer;
        uint8_t port_num;
        uint8_t timeout;
        uint8_t retry_cnt;
        uint8_t rnr_retry;
        uint8_t alt_port_num;
        uint8_t alt_timeout;
        uint32_t rate_limit;
};

enum ibv_wr_opcode {
        IBV_WR_RDMA_WRITE,
        IBV_WR_RDMA_WRITE_WITH_IMM,
        IBV_WR_SEND,
        IBV_WR_SEND_WITH_IMM,
        IBV_WR_RDMA_READ,
};

enum ibv_send_flags {
        IBV_SEND_FENCE = 1 << 0,
        IBV_SEND_SIGNALED = 1 << 1,
        IBV_SEND_SOLICITED = 1 << 2,
        IBV_SEND_INLINE = 1 << 3,
};

struct ibv_sge {
        uint64_t addr;
        uint32_t length;
        uint32_t lkey;
};

struct ibv_mw_bind_info {
        struct ibv_mr *mr;
        uint64_t addr;
        uint64_t length;
        unsigned int mw_access_flags;
};

struct ibv_send_wr {
        uint64_t wr_id;
        struct ibv_send_wr *next;
        struct ibv_sge *sg_list;
        int num_sge;
        enum ibv_wr_opcode opcode;
        unsigned int send_flags;
        union {
                uint32_t imm_data; /* big endian */
                uint32_t invalidate_rkey;
        };
        union {
                struct {
                        uint64_t remote_addr;
                        uint32_t rkey;
                } rdma;
                struct {
                        uint64_t remote_addr;
                        uint64_t compare_add;
                        uint64_t swap;
                        uint32_t rkey;
                } atomic;
                struct {
                        struct ibv_ah *ah;
                        uint32_t remote_qpn;
                        uint32_t remote_qkey;
                } ud;
        } wr;
        union {
                struct {
                        uint32_t remote_srqn;
                } xrc;
        } qp_type;
        union {
                struct {
                        struct ibv_mw *mw;
                        uint32_t rkey;
                        struct ibv_mw_bind_info bind_info;
                } bind_mw;
                struct {
                        void *hdr;
                        uint16_t hdr_sz;
                        uint16_t mss;
                } tso;
        };
};

struct ibv_qp;
/* The context's function table. Only poll_cq and post_send are called by gpuvet (the
 * inline ibv_poll_cq and ibv_post_send of verbs.h); the other slots keep the layout. */
struct ibv_context_ops {
        int (*_compat_query_device)(struct ibv_context *context, struct ibv_device_attr *device_attr);
        int (*_compat_query_port)(struct ibv_context *context, uint8_t port_num, struct _compat_ibv_port_attr *port_attr);
        void *(*_compat_alloc_pd)(void);
        void *(*_compat_dealloc_pd)(void);
        void *(*_compat_reg_mr)(void);
        void *(*_compat_rereg_mr)(void);
        void *(*_compat_dereg_mr)(void);
        struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, int type);
        int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);
        int (*dealloc_mw)(struct ibv_mw *mw);
        void *(*_compat_create_cq)(void);
        int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
        int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
        void *(*_compat_cq_event)(void);
        void *(*_compat_resize_cq)(void);
        void *(*_compat_destroy_cq)(void);
        void *(*_compat_create_srq)(void);
        void *(*_compat_modify_srq)(void);
        void *(*_compat_query_srq)(void);
        void *(*_compat_destroy_srq)(void);
        int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr, struct ibv_recv_wr **bad_recv_wr);
        void *(*_compat_create_qp)(void);
        void *(*_compat_query_qp)(void);
        void *(*_compat_modify_qp)(void);
        void *(*_compat_destroy_qp)(void);
        int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr);
        int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr);
        void *(*_compat_create_ah)(void);
        void *(*_compat_destroy_ah)(void);
        void *(*_compat_attach_mcast)(void);
        void *(*_compat_detach_mcast)(void);
        void *(*_compat_async_event)(void);
};

struct ibv_context {
        struct ibv_device *device;
        struct ibv_context_ops ops;
        int cmd_fd;
        int async_fd;
        int num_comp_vectors;
        pthread_mutex_t mutex;
        void *abi_compat;
};

struct ibv_cq {
        struct ibv_context *context;
        struct ibv_comp_channel *channel;
        void *cq_context;
        uint32_t handle;
        int cqe;
        pthread_mutex_t mutex;
        pthread_cond_t cond;
        uint32_t comp_events_completed;
        uint32_t async_events_completed;
};

struct ibv_qp {
        struct ibv_context *context;
        void *qp_context;
        struct ibv_pd *pd;
        struct ibv_cq *send_cq;
        struct ibv_cq *recv_cq;
        struct ibv_srq *srq;
        uint32_t handle;
        uint32_t qp_num;
        enum ibv_qp_state state;
        enum ibv_qp_type qp_type;
        pthread_mutex_t mutex;
        pthread_cond_t cond;
        uint32_t events_completed;
};

/* Function pointer types, one per entry of verbs_functions.def: <symbol>_fn. */
#define VERBS_FN(req, ret, name, params) typedef ret(*name##_fn) params;
#include "bindings/verbs_functions.def"
#undef VERBS_FN
