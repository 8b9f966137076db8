/* The part of the OpenCL 1.2 API that gpuvet's OpenCL backend (bindings/opencl_device.c) uses,
 * declared here so that gpuvet builds without the OpenCL SDK and loads the ICD loader
 * (libOpenCL.so.1) at run time with dlopen. Names and values are Khronos' own
 * (CL/cl.h, CL/cl_ext.h of opencl-headers 2023.02.06); only what opencl.c calls or
 * reads is declared. Add to it from the Khronos headers, never guess. */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_map_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_bitfield cl_device_fp_config;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_profiling_info;
typedef cl_uint cl_kernel_work_group_info;
typedef intptr_t cl_context_properties;

typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

#define CL_SUCCESS 0
#define CL_TRUE 1
#define CL_FALSE 0

/* cl_platform_info */
#define CL_PLATFORM_NAME 0x0902
#define CL_PLATFORM_VERSION 0x0901
/* cl_device_type */
#define CL_DEVICE_TYPE_CPU (1 << 1)
#define CL_DEVICE_TYPE_GPU (1 << 2)
#define CL_DEVICE_TYPE_ACCELERATOR (1 << 3)
#define CL_DEVICE_TYPE_ALL 0xFFFFFFFF
/* cl_device_info */
#define CL_DEVICE_TYPE 0x1000
#define CL_DEVICE_MAX_COMPUTE_UNITS 0x1002
#define CL_DEVICE_MAX_WORK_GROUP_SIZE 0x1004
#define CL_DEVICE_MAX_CLOCK_FREQUENCY 0x100C
#define CL_DEVICE_MAX_MEM_ALLOC_SIZE 0x1010
#define CL_DEVICE_GLOBAL_MEM_SIZE 0x101F
#define CL_DEVICE_HOST_UNIFIED_MEMORY 0x1035
#define CL_DEVICE_MEM_BASE_ADDR_ALIGN 0x1019
#define CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT 0x103A
#define CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE 0x103B
#define CL_DEVICE_NAME 0x102B
#define CL_DEVICE_VENDOR 0x102C
#define CL_DRIVER_VERSION 0x102D
#define CL_DEVICE_VERSION 0x102F
#define CL_DEVICE_EXTENSIONS 0x1030
#define CL_DEVICE_DOUBLE_FP_CONFIG 0x1032
/* Vendor extensions for the PCI address (cl_khr_pci_bus_info, cl_nv_device_attribute_query,
 * cl_amd_device_attribute_query). */
#define CL_DEVICE_PCI_BUS_INFO_KHR 0x410F
typedef struct _cl_device_pci_bus_info_khr {
        cl_uint pci_domain, pci_bus, pci_device, pci_function;
} cl_device_pci_bus_info_khr;
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#define CL_DEVICE_TOPOLOGY_AMD 0x4037
#define CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD 1
typedef union {
        struct { cl_uint type; cl_uint data[5]; } raw;
        struct { cl_uint type; char unused[17]; char bus; char device; char function; } pcie;
} cl_device_topology_amd;

/* cl_command_queue_properties */
#define CL_QUEUE_PROFILING_ENABLE (1 << 1)
/* cl_mem_flags */
#define CL_MEM_READ_WRITE (1 << 0)
#define CL_MEM_ALLOC_HOST_PTR (1 << 4)
/* cl_map_flags */
#define CL_MAP_READ (1 << 0)
#define CL_MAP_WRITE (1 << 1)
/* cl_program_build_info */
#define CL_PROGRAM_BUILD_LOG 0x1183
/* cl_profiling_info */
#define CL_PROFILING_COMMAND_QUEUED 0x1280
#define CL_PROFILING_COMMAND_START 0x1282
#define CL_PROFILING_COMMAND_END 0x1283

/* Error codes (cl.h, and cl_ext.h for the ICD loader's PLATFORM_NOT_FOUND_KHR). */
#define CL_DEVICE_NOT_FOUND -1
#define CL_MEM_OBJECT_ALLOCATION_FAILURE -4
#define CL_OUT_OF_RESOURCES -5
#define CL_OUT_OF_HOST_MEMORY -6
#define CL_BUILD_PROGRAM_FAILURE -11
#define CL_MAP_FAILURE -12
#define CL_INVALID_VALUE -30
#define CL_INVALID_KERNEL_NAME -46
#define CL_INVALID_BUFFER_SIZE -61
#define CL_PLATFORM_NOT_FOUND_KHR -1001

#define OPENCL_FN(ret, name, params) typedef ret(*name##_fn) params;
#include "bindings/opencl_functions.def"
#undef OPENCL_FN
