/* SPDX-License-Identifier: MIT */
/*
 * The few NVML types and codes erg uses, declared here so that no NVIDIA header is needed at build
 * time (NVML is loaded with dlopen). Values from the NVML API reference (nvml.h, nvmlReturn_t).
 */
#ifndef ERG_METER_NVML_ABI_H
#define ERG_METER_NVML_ABI_H

typedef struct erg__nvml_device *erg__nvml_dev; /* nvmlDevice_t, opaque */

enum {
    ERG__NVML_SUCCESS = 0,
    ERG__NVML_ERROR_UNINITIALIZED = 1,
    ERG__NVML_ERROR_INVALID_ARGUMENT = 2,
    ERG__NVML_ERROR_NOT_SUPPORTED = 3,
    ERG__NVML_ERROR_NO_PERMISSION = 4,
    ERG__NVML_ERROR_DRIVER_NOT_LOADED = 9,
    ERG__NVML_ERROR_TIMEOUT = 10,
    ERG__NVML_ERROR_GPU_IS_LOST = 15,
    ERG__NVML_ERROR_UNKNOWN = 999
};

#define ERG__NVML_TEMPERATURE_GPU 0
#define ERG__NVML_DEVICE_MIG_ENABLE 1

#endif
