/* Declarations the fake NVML needs beyond src/bindings/nvml_api.h: functions (and their
 * types) that gpuvet does not call but that the independent clients (pynvml, gpustat,
 * nvitop) call at start-up or for their displays. Names, values and layouts are those of
 * the official nvml.h (CUDA 13); only what the fake exports is declared here. */
#pragma once

#include "bindings/nvml_api.h"

/* The process record of the unversioned (v1) process queries. */
typedef struct nvmlProcessInfo_v1_st {
        unsigned int pid;
        unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

#define NVML_INIT_FLAG_NO_GPUS 1u

typedef struct nvmlTemperature_v1_st {
        unsigned int version; /* nvmlTemperature_v1 */
        nvmlTemperatureSensors_t sensorType;
        int temperature;
} nvmlTemperature_v1_t, nvmlTemperature_t;
/* NVML_STRUCT_VERSION(Temperature, 1): the struct size with the version in the top byte */
#define nvmlTemperature_v1 ((unsigned int)(sizeof(nvmlTemperature_v1_t) | (1u << 24)))

nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
const char *nvmlErrorString(nvmlReturn_t result);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan, unsigned int *speed);
nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int *numFans);
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t *temperature);
nvmlReturn_t nvmlDeviceGetPowerState(nvmlDevice_t device, nvmlPstates_t *pState);
nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device, unsigned int *isMigDevice);
nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device, unsigned int *id);
nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t migDevice, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetSupportedClocksEventReasons(nvmlDevice_t device,
                                                      unsigned long long *supportedClocksEventReasons);
nvmlReturn_t nvmlDeviceGetSupportedClocksThrottleReasons(nvmlDevice_t device,
                                                         unsigned long long *supportedClocksThrottleReasons);
