/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: signature/1 reader. */
#include "fuzz_common.h"

#include <erg/error.h>
#include <erg/signature.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = erg_fuzz_file("signature.json", data, size);
    if (!path)
        return 0;
    erg_signature sig;
    erg_signature_init(&sig);
    erg_diag diag;
    erg_diag_clear(&diag);
    if (erg_signature_read_file(path, &sig, &diag) == ERG_OK &&
        erg_signature_check(&sig, &diag) != ERG_OK)
        abort(); /* what the reader accepts is a valid signature */
    return 0;
}
