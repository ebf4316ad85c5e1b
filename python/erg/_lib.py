# SPDX-License-Identifier: MIT
"""ctypes declarations of liberg (include/erg/*.h), and how the shared object is found.

The layouts below mirror the C headers field for field; tests/python/test_layout.py compares every
size and offset with what the C compiler says (tests/python/layout.c), so a header change that is
not mirrored here fails CI instead of corrupting memory.

Where liberg is found, in order:
  1. $ERG_LIBRARY, the path of liberg's shared object (an error if it cannot be loaded);
  2. beside the package: erg/liberg.so* (an installed wheel may carry it), then, for a source
     checkout (PYTHONPATH=python), the build folders of the repository: build/gcc, build/release,
     then any other build/*/ holding liberg.so, newest first (sanitizer builds are skipped: their
     runtime must be loaded first);
  3. the system's (ctypes.util.find_library("erg"), then "liberg.so.0").
"""
import ctypes
import ctypes.util
import glob
import os

c_double = ctypes.c_double
c_int = ctypes.c_int
c_uint = ctypes.c_uint
c_size_t = ctypes.c_size_t
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_uint64 = ctypes.c_uint64
c_int64 = ctypes.c_int64

METER_ID_MAX = 64
METER_REASON_MAX = 256
SIG_NAME_MAX = 128
SIG_DEVICE_MAX = 64
SIG_META_MAX = 256


class Diag(ctypes.Structure):
    _fields_ = [("status", c_int), ("where", ctypes.c_char * 256), ("detail", ctypes.c_char * 512)]


class MeterOptions(ctypes.Structure):
    _fields_ = [("root", c_char_p), ("nvml_path", c_char_p), ("backends", c_char_p),
                ("sampler_period_s", c_double), ("estimator_idle_w", c_double),
                ("estimator_full_w", c_double), ("io", c_void_p), ("log", c_void_p),
                ("log_ud", c_void_p)]


class BackendInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 32), ("state", c_int),
                ("reason", ctypes.c_char * METER_REASON_MAX), ("n_channels", c_size_t)]


class ChannelInfo(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char * METER_ID_MAX), ("backend", ctypes.c_char * 32),
                ("domain", c_int), ("device", ctypes.c_char * METER_ID_MAX),
                ("label", ctypes.c_char * METER_ID_MAX), ("grade", c_int), ("kind", c_int),
                ("resolution_j", c_double), ("wrap_j", c_double), ("min_interval_s", c_double),
                ("max_power_w", c_double), ("parent", c_int), ("usable", c_int), ("live", c_int),
                ("deduplicated", c_int), ("reason", ctypes.c_char * METER_REASON_MAX),
                ("model_idle_w", c_double), ("model_full_w", c_double)]


class ChannelReading(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char * METER_ID_MAX), ("domain", c_int),
                ("device", ctypes.c_char * METER_ID_MAX), ("grade", c_int), ("state", c_int),
                ("reason", ctypes.c_char * METER_REASON_MAX), ("flags", c_uint),
                ("energy_j", c_double), ("in_total", c_int)]


class Measurement(ctypes.Structure):
    # Sized at run time (erg/meter.h): channels points to n_channels readings the measurement
    # owns (erg_meter_diff sizes it; erg_measurement_release frees it).
    _fields_ = [("time_s", c_double), ("cpu_s", c_double), ("n_channels", c_size_t),
                ("channels", ctypes.POINTER(ChannelReading)), ("capacity", c_size_t),
                ("total_energy_j", c_double),
                ("total_grade", c_int), ("n_total", c_size_t), ("total_flags", c_uint),
                ("total_reason", ctypes.c_char * METER_REASON_MAX)]


class Signature(ctypes.Structure):
    _fields_ = [("static_power_w", c_double), ("time_s", c_double),
                ("dynamic_energy_j", c_double), ("time_var_s2", c_double),
                ("energy_var_j2", c_double), ("grade", c_int), ("runs", c_uint),
                ("flags", c_uint), ("name", ctypes.c_char * SIG_NAME_MAX), ("device", ctypes.c_char * SIG_DEVICE_MAX),
                ("kappa", ctypes.c_char * SIG_DEVICE_MAX), ("theta", ctypes.c_char * SIG_META_MAX),
                ("omega", ctypes.c_char * SIG_META_MAX)]


class CalibrationChannel(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char * METER_ID_MAX), ("domain", c_int),
                ("device", ctypes.c_char * METER_ID_MAX), ("idle_power_w", c_double),
                ("cv", c_double), ("samples", c_size_t), ("utilisation", c_double),
                ("flags", c_uint)]


class Calibration(ctypes.Structure):
    _fields_ = [("duration_s", c_double), ("window_s", c_double), ("idle_power_w", c_double),
                ("flags", c_uint), ("n_channels", c_size_t),
                ("channels", ctypes.POINTER(CalibrationChannel))]


class StabilityOptions(ctypes.Structure):
    _fields_ = [("cpu_max_c", c_double), ("gpu_max_c", c_double), ("timeout_s", c_double),
                ("sample_s", c_double), ("n_samples", c_size_t), ("progress", c_void_p),
                ("progress_ud", c_void_p), ("interrupted", c_void_p), ("interrupt_ud", c_void_p)]


class StabilityResult(ctypes.Structure):
    _fields_ = [("stable", c_int), ("estimator_only", c_int), ("waited_s", c_double),
                ("waiting_for", ctypes.c_char * METER_REASON_MAX),
                ("reason", ctypes.c_char * METER_REASON_MAX)]


class MeanSd(ctypes.Structure):
    _fields_ = [("mean", c_double), ("sd", c_double), ("median", c_double), ("min", c_double),
                ("max", c_double)]


class ChannelSummary(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char * METER_ID_MAX), ("domain", c_int),
                ("device", ctypes.c_char * METER_ID_MAX), ("grade", c_int), ("state", c_int),
                ("reason", ctypes.c_char * METER_REASON_MAX), ("flags", c_uint),
                ("energy_j", MeanSd), ("baseline_j", MeanSd), ("net_energy_j", MeanSd),
                ("in_total", c_int)]


class Summary(ctypes.Structure):
    _fields_ = [("runs", c_size_t), ("time_s", MeanSd), ("n_channels", c_size_t),
                ("channels", ctypes.POINTER(ChannelSummary)), ("total_energy_j", MeanSd),
                ("total_baseline_j", MeanSd), ("total_net_energy_j", MeanSd),
                ("total_flags", c_uint), ("total_grade", c_int), ("static_power_w", c_double),
                ("n_total", c_size_t), ("energy_floor_j", c_double), ("time_floor_s", c_double),
                ("total_reason", ctypes.c_char * METER_REASON_MAX)]


class RunOutcome(ctypes.Structure):
    _fields_ = [("status", c_int), ("user_cpu_s", c_double), ("system_cpu_s", c_double),
                ("flags", c_uint)]


RUN_FN = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(RunOutcome))


class ProtocolProgress(ctypes.Structure):
    _fields_ = [("phase", c_int), ("done", c_size_t), ("total", c_size_t),
                ("elapsed_s", c_double), ("last_time_s", c_double), ("last_energy_j", c_double),
                ("detail", c_char_p)]


class ProtocolOptions(ctypes.Structure):
    _fields_ = [("runs", c_size_t), ("warmup", c_size_t), ("cooldown_s", c_double),
                ("min_window_s", c_double), ("max_repetitions", c_size_t), ("stable", c_int),
                ("stability", StabilityOptions), ("baseline", c_int), ("baseline_w", c_double),
                ("calibration", ctypes.POINTER(Calibration)), ("calibration_path", c_char_p),
                ("settle_max_s", c_double), ("extra_busy_s", c_double), ("root", c_char_p),
                ("timeline_period_s", c_double),
                ("command", ctypes.POINTER(c_char_p)), ("run", RUN_FN), ("run_ud", c_void_p),
                ("progress", c_void_p), ("progress_ud", c_void_p), ("interrupted", c_void_p),
                ("interrupt_ud", c_void_p)]


class RunRecord(ctypes.Structure):
    _fields_ = [("status", c_int), ("flags", c_uint), ("repetitions", c_size_t),
                ("time_s", c_double), ("energy_j", c_double), ("grade", c_int),
                ("has_total", c_int), ("user_cpu_s", c_double), ("system_cpu_s", c_double),
                ("erg_cpu_s", c_double), ("machine_cpu_s", c_double), ("begin_failed", c_int)]


class Attribution(ctypes.Structure):
    _fields_ = [("cpu_share", c_double), ("attributed_energy_j", c_double), ("grade", c_int)]


class ProtocolResult(ctypes.Structure):
    _fields_ = [("stop_status", c_int), ("stop_detail", ctypes.c_char * METER_REASON_MAX),
                ("runs_requested", c_size_t), ("runs_attempted", c_size_t),
                ("runs_ok", c_size_t), ("per_run", ctypes.POINTER(RunRecord)),
                ("summary", ctypes.POINTER(Summary)), ("user_cpu_s", MeanSd),
                ("system_cpu_s", MeanSd), ("erg_cpu_s", MeanSd), ("attribution", Attribution),
                ("settle_s", c_double), ("settle_self_cpu", c_double),
                ("stability_checked", c_int), ("stability", StabilityResult),
                ("baseline", c_int), ("baseline_power_w", c_double), ("run_flags", c_uint),
                ("n_warnings", c_size_t), ("warnings", ctypes.POINTER(c_char_p)),
                ("command", ctypes.POINTER(c_char_p)), ("timeline", c_void_p)]


class ComposeOptions(ctypes.Structure):
    _fields_ = [("confidence", c_double), ("warm_start", c_int), ("mc_samples", c_uint64),
                ("mc_seed", c_uint64), ("workspace", c_void_p)]


class DeviceReport(ctypes.Structure):
    _fields_ = [("id", ctypes.c_char * SIG_DEVICE_MAX), ("static_energy_j", c_double),
                ("dynamic_energy_j", c_double), ("busy_s", c_double), ("idle_s", c_double)]


class Report(ctypes.Structure):
    _fields_ = [("total", Signature), ("energy_j", c_double), ("energy_sd_j", c_double),
                ("time_s", c_double), ("time_sd_s", c_double), ("static_energy_j", c_double),
                ("dynamic_energy_j", c_double), ("confidence", c_double),
                ("interval_j", c_double * 2), ("bias_bound_j", c_double), ("grade", c_int),
                ("flags", c_uint), ("n_devices", c_size_t), ("devices", ctypes.POINTER(DeviceReport)),
                ("has_mc", c_int), ("mc_energy_j", c_double), ("mc_energy_sd_j", c_double),
                ("mc_time_s", c_double), ("mc_time_sd_s", c_double), ("mc_samples", c_uint64),
                ("has_deviation", c_int), ("measured_j", c_double), ("measured_sd_j", c_double),
                ("deviation_z", c_double), ("deviation_detected", c_int),
                ("n_elements", c_size_t)]


class FrontierPoint(ctypes.Structure):
    _fields_ = [("time_s", c_double), ("energy_j", c_double), ("static_energy_j", c_double),
                ("dynamic_energy_j", c_double), ("bound_j", c_double)]


class Frontier(ctypes.Structure):
    _fields_ = [("n_points", c_size_t), ("points", ctypes.POINTER(FrontierPoint)),
                ("n_elements", c_size_t), ("element_names", ctypes.POINTER(c_char_p)),
                ("choices", ctypes.POINTER(c_size_t)), ("method", c_int), ("epsilon", c_double),
                ("max_gap_j", c_double)]


class FrontierOptions(ctypes.Structure):
    _fields_ = [("epsilon", c_double), ("dag_method", c_int), ("enum_limit", c_double),
                ("lp_deadlines", c_size_t)]


class OpDims(ctypes.Structure):
    _fields_ = [("op", c_int), ("dtype", c_int), ("m", c_int64), ("n", c_int64), ("k", c_int64),
                ("tokens", c_int64), ("d_model", c_int64)]


class OpPrediction(ctypes.Structure):
    _fields_ = [("time_s", c_double), ("energy_j", c_double), ("regime", c_uint),
                ("fallback", c_int), ("extrapolated", c_int), ("time_bounded", c_int),
                ("energy_bounded", c_int), ("method", c_int), ("floor_time_s", c_double),
                ("power_w", c_double), ("why", ctypes.c_char * 160), ("grade", c_int)]


# Structures whose layout tests/python/layout.c reports (C name -> ctypes class).
LAYOUTS = {
    "erg_diag": Diag, "erg_meter_options": MeterOptions, "erg_backend_info": BackendInfo,
    "erg_channel_info": ChannelInfo, "erg_channel_reading": ChannelReading,
    "erg_measurement": Measurement, "erg_signature": Signature,
    "erg_calibration_channel": CalibrationChannel, "erg_calibration": Calibration,
    "erg_stability_options": StabilityOptions, "erg_stability_result": StabilityResult,
    "erg_mean_sd": MeanSd, "erg_channel_summary": ChannelSummary, "erg_summary": Summary,
    "erg_compose_options": ComposeOptions, "erg_device_report": DeviceReport,
    "erg_report": Report, "erg_frontier_point": FrontierPoint, "erg_frontier": Frontier,
    "erg_frontier_options": FrontierOptions, "erg_op_dims": OpDims,
    "erg_op_prediction": OpPrediction, "erg_run_outcome": RunOutcome,
    "erg_protocol_progress": ProtocolProgress, "erg_protocol_options": ProtocolOptions,
    "erg_run_record": RunRecord, "erg_attribution": Attribution,
    "erg_protocol_result": ProtocolResult,
}

P = ctypes.POINTER
_PROTOS = {
    # core
    "erg_strerror": (c_char_p, [c_int]),
    "erg_status_name": (c_char_p, [c_int]),
    "erg_version": (c_char_p, []),
    "erg_grade_name": (c_char_p, [c_int]),
    "erg_domain_name": (c_char_p, [c_int]),
    "erg_flag_name": (c_char_p, [c_uint]),
    "erg_flag_parse": (c_int, [c_char_p, ctypes.POINTER(c_uint)]),
    "erg_reading_state_name": (c_char_p, [c_int]),
    "erg_backend_state_name": (c_char_p, [c_int]),
    "erg_calibration_flag_name": (c_char_p, [c_uint]),
    # meter
    "erg_meter_options_init": (None, [P(MeterOptions)]),
    "erg_meter_open": (c_int, [P(MeterOptions), P(c_void_p), P(Diag)]),
    "erg_meter_close": (None, [c_void_p]),
    "erg_meter_backend_count": (c_size_t, [c_void_p]),
    "erg_meter_backend_info": (c_int, [c_void_p, c_size_t, P(BackendInfo)]),
    "erg_meter_channel_count": (c_size_t, [c_void_p]),
    "erg_meter_channel_info": (c_int, [c_void_p, c_size_t, P(ChannelInfo)]),
    "erg_meter_probe_liveness": (c_int, [c_void_p, c_double, P(Diag)]),
    "erg_meter_poll": (c_int, [c_void_p]),
    "erg_meter_sampler_start": (c_int, [c_void_p, c_double]),
    "erg_meter_sampler_stop": (None, [c_void_p]),
    "erg_meter_sampler_period_s": (c_double, [c_void_p]),
    "erg_meter_snapshot_new": (c_void_p, [c_void_p]),
    "erg_meter_snapshot_free": (None, [c_void_p]),
    "erg_meter_snapshot_take": (c_int, [c_void_p, c_void_p]),
    "erg_meter_diff": (c_int, [c_void_p, c_void_p, c_void_p, c_double, P(Measurement)]),
    "erg_measurement_copy": (c_int, [P(Measurement), P(Measurement)]),
    "erg_measurement_release": (None, [P(Measurement)]),
    # measure
    "erg_monitor_open": (c_int, [c_void_p, P(c_void_p), P(Diag)]),
    "erg_monitor_close": (None, [c_void_p]),
    "erg_window_begin": (c_int, [c_void_p, c_char_p, P(Diag)]),
    "erg_window_end": (c_int, [c_void_p, c_char_p, c_double, P(Measurement), P(Diag)]),
    "erg_window_cancel": (c_int, [c_void_p, c_char_p]),
    "erg_calibrate": (c_int, [c_void_p, c_double, c_double, P(P(Calibration)), P(Diag)]),
    "erg_calibration_new": (P(Calibration), [c_size_t]),
    "erg_calibration_free": (None, [P(Calibration)]),
    "erg_calibration_idle_w": (c_double, [P(Calibration), c_char_p]),
    "erg_calibration_write_file": (c_int, [c_char_p, P(Calibration), P(Diag)]),
    "erg_calibration_read_file": (c_int, [c_char_p, P(P(Calibration)), P(Diag)]),
    "erg_calibration_default_path": (c_int, [c_char_p, ctypes.POINTER(c_size_t)]),
    "erg_stability_options_init": (None, [P(StabilityOptions)]),
    "erg_wait_stable": (c_int, [c_void_p, P(Calibration), P(StabilityOptions),
                                P(StabilityResult), P(Diag)]),
    "erg_summarize": (c_int, [P(Measurement), c_size_t, c_int, P(Calibration), c_double,
                              P(P(Summary)), P(Diag)]),
    "erg_summary_free": (None, [P(Summary)]),
    "erg_summary_set_floors": (c_int, [P(Summary), c_void_p]),
    "erg_protocol_options_init": (None, [P(ProtocolOptions)]),
    "erg_protocol_run": (c_int, [c_void_p, P(ProtocolOptions), P(P(ProtocolResult)), P(Diag)]),
    "erg_protocol_result_free": (None, [P(ProtocolResult)]),
    "erg_protocol_signature": (c_int, [P(ProtocolResult), c_char_p, P(Signature), P(c_int),
                                       P(Diag)]),
    "erg_baseline_source_name": (c_char_p, [c_int]),
    "erg_summary_signature": (c_int, [P(Summary), c_char_p, c_char_p, P(Signature), P(c_int),
                                      P(Diag)]),
    # signature
    "erg_signature_init": (None, [P(Signature)]),
    "erg_signature_energy_j": (c_double, [P(Signature)]),
    "erg_signature_check": (c_int, [P(Signature), P(Diag)]),
    "erg_signature_idle": (c_int, [c_char_p, c_double, c_double, P(Signature)]),
    "erg_signature_seq": (c_int, [P(Signature), c_size_t, P(Signature), P(Diag)]),
    "erg_signature_par": (c_int, [P(Signature), c_size_t, P(Signature), P(Diag)]),
    "erg_signature_multi": (c_int, [P(Signature), c_size_t, P(Signature), P(Diag)]),
    "erg_signature_read_file": (c_int, [c_char_p, P(Signature), P(Diag)]),
    "erg_signature_write_file": (c_int, [c_char_p, P(Signature), P(Diag)]),
    # calculus
    "erg_schedule_new": (c_void_p, []),
    "erg_schedule_free": (None, [c_void_p]),
    "erg_schedule_read_file": (c_int, [c_char_p, P(c_void_p), P(Diag)]),
    "erg_schedule_write_file": (c_int, [c_char_p, c_void_p, P(Diag)]),
    "erg_schedule_add_device": (c_int, [c_void_p, c_char_p, c_double, c_double, P(Diag)]),
    "erg_schedule_add_signature": (c_int, [c_void_p, P(Signature), P(Diag)]),
    "erg_schedule_add_node": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_double,
                                      P(Diag)]),
    "erg_schedule_add_edge": (c_int, [c_void_p, c_char_p, c_char_p, P(Diag)]),
    "erg_compose_options_init": (None, [P(ComposeOptions)]),
    "erg_schedule_compose": (c_int, [c_void_p, P(ComposeOptions), P(Report), P(Diag)]),
    "erg_report_free": (None, [P(Report)]),
    "erg_report_deviation": (c_int, [P(Report), c_double, c_double, P(Diag)]),
    # frontier
    "erg_pareto_min": (c_int, [P(c_double), P(c_double), c_size_t, P(c_size_t), P(c_size_t)]),
    "erg_frontier_free": (None, [P(Frontier)]),
    "erg_opsched_new": (c_void_p, []),
    "erg_opsched_free": (None, [c_void_p]),
    "erg_opsched_read_file": (c_int, [c_char_p, P(c_void_p), P(Diag)]),
    "erg_opsched_add_device": (c_int, [c_void_p, c_char_p, c_double, P(Diag)]),
    "erg_opsched_add_point": (c_int, [c_void_p, c_char_p, P(Signature), c_char_p, P(Diag)]),
    "erg_opsched_expr_leaf": (c_int, [c_void_p, c_char_p, P(c_size_t), P(Diag)]),
    "erg_opsched_expr_op": (c_int, [c_void_p, c_int, P(c_size_t), c_size_t, P(c_size_t),
                                    P(Diag)]),
    "erg_opsched_add_node": (c_int, [c_void_p, c_char_p, c_char_p, P(Diag)]),
    "erg_opsched_add_edge": (c_int, [c_void_p, c_char_p, c_char_p, P(Diag)]),
    "erg_frontier_options_init": (None, [P(FrontierOptions)]),
    "erg_opsched_frontier": (c_int, [c_void_p, P(FrontierOptions), P(Frontier), P(Diag)]),
    # predict (level 1)
    "erg_op_parse": (c_int, [c_char_p, P(c_int)]),
    "erg_dtype_parse": (c_int, [c_char_p, P(c_int)]),
    "erg_op_model_load": (c_int, [c_char_p, P(c_void_p), P(Diag)]),
    "erg_op_model_free": (None, [c_void_p]),
    "erg_op_model_target": (c_char_p, [c_void_p]),
    "erg_op_model_grade": (c_int, [c_void_p]),
    "erg_op_model_predict": (c_int, [c_void_p, P(OpDims), P(OpPrediction), P(Diag)]),
    "erg_op_model_signature": (c_int, [c_void_p, P(OpDims), c_double, P(Signature), P(Diag)]),
    "erg_op_model_default_path": (c_int, [c_char_p, c_char_p, ctypes.POINTER(c_size_t)]),
    "erg_target_identity": (None, [c_char_p, c_size_t, c_char_p, c_size_t]),
}


def _candidates():
    env = os.environ.get("ERG_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "liberg.so*")))
    repo = os.path.dirname(os.path.dirname(here))
    build = os.path.join(repo, "build")
    if os.path.isdir(build):
        preferred = [os.path.join(build, b, "liberg.so") for b in ("gcc", "release")]
        others = [p for p in glob.glob(os.path.join(build, "*", "liberg.so"))
                  if p not in preferred and "asan" not in p and "fuzz" not in p]
        others.sort(key=lambda p: -os.path.getmtime(p))
        found += [p for p in preferred if os.path.exists(p)] + others
    sys_lib = ctypes.util.find_library("erg")
    found += [sys_lib] if sys_lib else []
    found.append("liberg.so.0")
    return found, False


def _load():
    paths, explicit = _candidates()
    errors = []
    for p in paths:
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            if explicit:
                raise ImportError("erg: ERG_LIBRARY=%s cannot be loaded: %s" % (p, e)) from None
            errors.append("%s: %s" % (p, e))
    raise ImportError("erg: liberg not found (set ERG_LIBRARY to the path of liberg.so, e.g. "
                      "build/gcc/liberg.so after a build); tried " + "; ".join(errors))


lib, path = _load()
for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def text(b):
    """C char array or char* -> str."""
    return b.decode("utf-8", "replace") if b else ""


def default_path(fn, *args):
    """Call an erg default-path function (libuv's rule: ERG_OK with the length in *size, or
    ERG_ERANGE with the size needed in *size): the path as str, or None when it has none."""
    size = c_size_t(256)
    for _ in range(2):
        buf = ctypes.create_string_buffer(size.value)
        rc = fn(*args, buf, ctypes.byref(size))
        if rc == 0:
            return text(buf.value)
        if rc != -34:  # ERG_ERANGE (-ERANGE): again with the size it asked for
            return None
    return None
