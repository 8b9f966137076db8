/* The CUDA driver API's result codes (CUresult) we name ourselves: the driver's
 * cuGetErrorName is not always there to ask (the toolkit's stub library, a probe process
 * that died). */
#pragma once

/* "CUDA_ERROR_NO_DEVICE" and "no CUDA-capable device is detected", or NULL for a code
 * not in our table (ask the driver's cuGetErrorName then). */
const char *cuda_error_name(int rc);
const char *cuda_error_text(int rc);
