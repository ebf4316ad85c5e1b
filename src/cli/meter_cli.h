/* SPDX-License-Identifier: MIT */
/* Private helpers shared by erg meters, erg measure and erg calibrate (defined in cmd_meters.c). */
#ifndef ERG_CLI_METER_CLI_H
#define ERG_CLI_METER_CLI_H

#include <jansson.h>

#include "erg/meter.h"

/* Open a meter with ERG_ROOT / ERG_NVML_LIB / ERG_BACKENDS, backends overriding the last. On
 * failure print "erg: ..." and return the exit status (2 or 3); 0 on success. */
int erg_cli_meter_open(const char *backends, erg_meter **out);
/* A JSON number, or null when not finite. */
json_t *erg_cli_num(double v);
/* Flags as a JSON array of names. */
json_t *erg_cli_flags_json(unsigned flags);
/* Flags as "a,b" text ("-" when none). */
void erg_cli_flags_text(unsigned flags, char *buf, size_t size);
/* Print a JSON document on stdout, one object and a newline. 0, or 2 on failure. */
int erg_cli_print_json(json_t *root);

#endif
