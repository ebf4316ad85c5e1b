/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: model/1 reader (erg_op_model_load), then a prediction for each op it has. */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/predict.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("model.json", data, size);
    if (!path)
        return 0;
    erg_op_model *m = NULL;
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_op_model_load(path, &m, &diag) != ERG_OK)
        return 0;
    (void)erg_op_model_target(m);
    (void)erg_op_model_grade(m);
    erg_op_model_free(m);
    return 0;
}
