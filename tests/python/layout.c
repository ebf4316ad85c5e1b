/* SPDX-License-Identifier: MIT */
/* Prints, as JSON, the size of every public struct python/erg/_lib.py mirrors and the offset of
 * each of its fields, as this compiler lays them out; test_layout.py compares them with ctypes. */
#include <erg/erg.h>

#include <stddef.h>
#include <stdio.h>

static int first_struct = 1;
static int first_field;

static void st_begin(const char *name, size_t size)
{
    printf("%s\n \"%s\": {\"size\": %zu, \"fields\": {", first_struct ? "" : ",", name, size);
    first_struct = 0;
    first_field = 1;
}

static void field(const char *name, size_t off)
{
    printf("%s\"%s\": %zu", first_field ? "" : ", ", name, off);
    first_field = 0;
}

#define F(T, f) field(#f, offsetof(T, f))
#define ST(T, ...)                                                                                 \
    do {                                                                                           \
        st_begin(#T, sizeof(T));                                                                   \
        __VA_ARGS__;                                                                               \
        printf("}}");                                                                              \
    } while (0)

int main(void)
{
    printf("{");
    ST(erg_diag, F(erg_diag, status), F(erg_diag, where), F(erg_diag, detail));
    ST(erg_meter_options, F(erg_meter_options, root), F(erg_meter_options, nvml_path),
       F(erg_meter_options, backends), F(erg_meter_options, sampler_period_s),
       F(erg_meter_options, estimator_idle_w), F(erg_meter_options, estimator_full_w),
       F(erg_meter_options, io), F(erg_meter_options, log), F(erg_meter_options, log_ud));
    ST(erg_backend_info, F(erg_backend_info, name), F(erg_backend_info, state),
       F(erg_backend_info, reason), F(erg_backend_info, n_channels));
    ST(erg_channel_info, F(erg_channel_info, id), F(erg_channel_info, backend),
       F(erg_channel_info, domain), F(erg_channel_info, device), F(erg_channel_info, label),
       F(erg_channel_info, grade), F(erg_channel_info, kind), F(erg_channel_info, resolution_j),
       F(erg_channel_info, wrap_j), F(erg_channel_info, min_interval_s),
       F(erg_channel_info, max_power_w), F(erg_channel_info, parent), F(erg_channel_info, usable),
       F(erg_channel_info, live), F(erg_channel_info, deduplicated), F(erg_channel_info, reason),
       F(erg_channel_info, model_idle_w), F(erg_channel_info, model_full_w));
    ST(erg_channel_reading, F(erg_channel_reading, id), F(erg_channel_reading, domain),
       F(erg_channel_reading, device), F(erg_channel_reading, grade), F(erg_channel_reading, state),
       F(erg_channel_reading, reason), F(erg_channel_reading, flags),
       F(erg_channel_reading, energy_j), F(erg_channel_reading, in_total));
    ST(erg_measurement, F(erg_measurement, time_s), F(erg_measurement, cpu_s),
       F(erg_measurement, n_channels), F(erg_measurement, channels), F(erg_measurement, capacity),
       F(erg_measurement, total_energy_j), F(erg_measurement, total_grade),
       F(erg_measurement, n_total), F(erg_measurement, total_flags),
       F(erg_measurement, total_reason));
    ST(erg_signature, F(erg_signature, static_power_w), F(erg_signature, time_s),
       F(erg_signature, dynamic_energy_j), F(erg_signature, time_var_s2),
       F(erg_signature, energy_var_j2), F(erg_signature, grade), F(erg_signature, runs),
       F(erg_signature, name), F(erg_signature, device), F(erg_signature, kappa),
       F(erg_signature, theta), F(erg_signature, omega));
    ST(erg_calibration_channel, F(erg_calibration_channel, id), F(erg_calibration_channel, domain),
       F(erg_calibration_channel, device), F(erg_calibration_channel, idle_power_w),
       F(erg_calibration_channel, cv), F(erg_calibration_channel, samples),
       F(erg_calibration_channel, utilisation), F(erg_calibration_channel, flags));
    ST(erg_calibration, F(erg_calibration, duration_s), F(erg_calibration, window_s),
       F(erg_calibration, idle_power_w), F(erg_calibration, flags), F(erg_calibration, n_channels),
       F(erg_calibration, channels));
    ST(erg_stability_options, F(erg_stability_options, cpu_max_c),
       F(erg_stability_options, gpu_max_c), F(erg_stability_options, timeout_s),
       F(erg_stability_options, sample_s), F(erg_stability_options, n_samples),
       F(erg_stability_options, progress), F(erg_stability_options, progress_ud),
       F(erg_stability_options, interrupted), F(erg_stability_options, interrupt_ud));
    ST(erg_stability_result, F(erg_stability_result, stable), F(erg_stability_result, waited_s),
       F(erg_stability_result, waiting_for), F(erg_stability_result, reason));
    ST(erg_mean_sd, F(erg_mean_sd, mean), F(erg_mean_sd, sd), F(erg_mean_sd, median),
       F(erg_mean_sd, min), F(erg_mean_sd, max));
    ST(erg_channel_summary, F(erg_channel_summary, id), F(erg_channel_summary, domain),
       F(erg_channel_summary, device), F(erg_channel_summary, grade), F(erg_channel_summary, state),
       F(erg_channel_summary, reason), F(erg_channel_summary, flags),
       F(erg_channel_summary, energy_j), F(erg_channel_summary, baseline_j),
       F(erg_channel_summary, net_energy_j), F(erg_channel_summary, in_total));
    ST(erg_summary, F(erg_summary, runs), F(erg_summary, time_s), F(erg_summary, n_channels),
       F(erg_summary, channels), F(erg_summary, total_energy_j), F(erg_summary, total_baseline_j),
       F(erg_summary, total_net_energy_j), F(erg_summary, total_flags), F(erg_summary, total_grade),
       F(erg_summary, static_power_w), F(erg_summary, n_total), F(erg_summary, energy_floor_j),
       F(erg_summary, time_floor_s), F(erg_summary, total_reason));
    ST(erg_compose_options, F(erg_compose_options, confidence), F(erg_compose_options, warm_start),
       F(erg_compose_options, mc_samples), F(erg_compose_options, mc_seed),
       F(erg_compose_options, workspace));
    ST(erg_device_report, F(erg_device_report, id), F(erg_device_report, static_energy_j),
       F(erg_device_report, dynamic_energy_j), F(erg_device_report, busy_s),
       F(erg_device_report, idle_s));
    ST(erg_report, F(erg_report, total), F(erg_report, energy_j), F(erg_report, energy_sd_j),
       F(erg_report, time_s), F(erg_report, time_sd_s), F(erg_report, static_energy_j),
       F(erg_report, dynamic_energy_j), F(erg_report, confidence), F(erg_report, interval_j),
       F(erg_report, bias_bound_j), F(erg_report, grade), F(erg_report, n_devices),
       F(erg_report, devices), F(erg_report, has_mc), F(erg_report, mc_energy_j),
       F(erg_report, mc_energy_sd_j), F(erg_report, mc_time_s), F(erg_report, mc_time_sd_s),
       F(erg_report, mc_samples), F(erg_report, has_deviation), F(erg_report, measured_j),
       F(erg_report, measured_sd_j), F(erg_report, deviation_z), F(erg_report, deviation_detected),
       F(erg_report, n_elements));
    ST(erg_frontier_point, F(erg_frontier_point, time_s), F(erg_frontier_point, energy_j),
       F(erg_frontier_point, static_energy_j), F(erg_frontier_point, dynamic_energy_j),
       F(erg_frontier_point, bound_j));
    ST(erg_frontier, F(erg_frontier, n_points), F(erg_frontier, points),
       F(erg_frontier, n_elements), F(erg_frontier, element_names), F(erg_frontier, choices),
       F(erg_frontier, method), F(erg_frontier, epsilon), F(erg_frontier, max_gap_j));
    ST(erg_frontier_options, F(erg_frontier_options, epsilon), F(erg_frontier_options, dag_method),
       F(erg_frontier_options, enum_limit), F(erg_frontier_options, lp_deadlines));
    ST(erg_op_dims, F(erg_op_dims, op), F(erg_op_dims, dtype), F(erg_op_dims, m), F(erg_op_dims, n),
       F(erg_op_dims, k), F(erg_op_dims, tokens), F(erg_op_dims, d_model));
    ST(erg_op_prediction, F(erg_op_prediction, time_s), F(erg_op_prediction, energy_j),
       F(erg_op_prediction, regime), F(erg_op_prediction, fallback),
       F(erg_op_prediction, extrapolated), F(erg_op_prediction, time_bounded),
       F(erg_op_prediction, energy_bounded), F(erg_op_prediction, method),
       F(erg_op_prediction, floor_time_s), F(erg_op_prediction, power_w), F(erg_op_prediction, why),
       F(erg_op_prediction, grade));
    ST(erg_run_outcome, F(erg_run_outcome, status), F(erg_run_outcome, user_cpu_s),
       F(erg_run_outcome, system_cpu_s), F(erg_run_outcome, flags));
    ST(erg_protocol_progress, F(erg_protocol_progress, phase), F(erg_protocol_progress, done),
       F(erg_protocol_progress, total), F(erg_protocol_progress, elapsed_s),
       F(erg_protocol_progress, last_time_s), F(erg_protocol_progress, last_energy_j),
       F(erg_protocol_progress, detail));
    ST(erg_protocol_options, F(erg_protocol_options, runs), F(erg_protocol_options, warmup),
       F(erg_protocol_options, cooldown_s), F(erg_protocol_options, min_window_s),
       F(erg_protocol_options, max_repetitions), F(erg_protocol_options, stable),
       F(erg_protocol_options, stability), F(erg_protocol_options, baseline),
       F(erg_protocol_options, baseline_w), F(erg_protocol_options, calibration),
       F(erg_protocol_options, calibration_path), F(erg_protocol_options, settle_max_s),
       F(erg_protocol_options, extra_busy_s), F(erg_protocol_options, root),
       F(erg_protocol_options, timeline_period_s), F(erg_protocol_options, command),
       F(erg_protocol_options, run), F(erg_protocol_options, run_ud),
       F(erg_protocol_options, progress), F(erg_protocol_options, progress_ud),
       F(erg_protocol_options, interrupted), F(erg_protocol_options, interrupt_ud));
    ST(erg_run_record, F(erg_run_record, status), F(erg_run_record, flags),
       F(erg_run_record, repetitions), F(erg_run_record, time_s), F(erg_run_record, energy_j),
       F(erg_run_record, grade), F(erg_run_record, has_total), F(erg_run_record, user_cpu_s),
       F(erg_run_record, system_cpu_s), F(erg_run_record, erg_cpu_s),
       F(erg_run_record, machine_cpu_s), F(erg_run_record, begin_failed));
    ST(erg_attribution, F(erg_attribution, cpu_share), F(erg_attribution, attributed_energy_j),
       F(erg_attribution, grade));
    ST(erg_protocol_result, F(erg_protocol_result, stop_status),
       F(erg_protocol_result, stop_detail), F(erg_protocol_result, runs_requested),
       F(erg_protocol_result, runs_attempted), F(erg_protocol_result, runs_ok),
       F(erg_protocol_result, per_run), F(erg_protocol_result, summary),
       F(erg_protocol_result, user_cpu_s), F(erg_protocol_result, system_cpu_s),
       F(erg_protocol_result, erg_cpu_s), F(erg_protocol_result, attribution),
       F(erg_protocol_result, settle_s), F(erg_protocol_result, settle_self_cpu),
       F(erg_protocol_result, stability_checked), F(erg_protocol_result, stability),
       F(erg_protocol_result, baseline), F(erg_protocol_result, baseline_power_w),
       F(erg_protocol_result, run_flags), F(erg_protocol_result, n_warnings),
       F(erg_protocol_result, warnings), F(erg_protocol_result, command),
       F(erg_protocol_result, timeline));
    printf("\n}\n");
    return 0;
}
