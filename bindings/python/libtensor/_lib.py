# SPDX-License-Identifier: MIT
"""Loading libtensor.so and declaring the C signatures (ctypes, no compiler needed).

The library is found, in order, through the environment variable LIBTENSOR_PATH (a file or a
folder), next to this package, in a build tree above it, in the installed tree the package
sits in (PREFIX/lib/python3/dist-packages), then on the system. Functions that the
loaded library does not export yet are simply absent: `has(name)` tells, `fn(name)` raises.
"""
import ctypes
import ctypes.util
import glob
import operator
import os
import threading

c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_int_p = ctypes.POINTER(ctypes.c_int)
c_int32_p = ctypes.POINTER(ctypes.c_int32)
c_size_t_p = ctypes.POINTER(ctypes.c_size_t)
handle = ctypes.c_void_p
handle_p = ctypes.POINTER(ctypes.c_void_p)
status = ctypes.c_int
release_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)

# name: (restype, argtypes)
_SIGNATURES = {
    "lt_version": (ctypes.c_char_p, []),
    "lt_version_number": (ctypes.c_int, []),
    "lt_status_string": (ctypes.c_char_p, [status]),
    "lt_last_error": (ctypes.c_char_p, []),
    "lt_clear_error": (None, []),
    "lt_dtype_size": (ctypes.c_size_t, [ctypes.c_int]),
    "lt_dtype_name": (ctypes.c_char_p, [ctypes.c_int]),
    "lt_dtype_from_name": (status, [ctypes.c_char_p, c_int_p]),
    # issue 18 A: dtypes, exact items, where/clip
    "lt_dtype_promote": (status, [ctypes.c_int, ctypes.c_int, c_int_p]),
    "lt_dtype_is_integer": (ctypes.c_bool, [ctypes.c_int]),
    "lt_dtype_is_signed": (ctypes.c_bool, [ctypes.c_int]),
    "lt_dtype_is_float": (ctypes.c_bool, [ctypes.c_int]),
    "lt_tensor_get_i64": (status, [handle, c_int64_p, c_int64_p]),
    "lt_tensor_get_u64": (status, [handle, c_int64_p, ctypes.POINTER(ctypes.c_uint64)]),
    "lt_tensor_set_i64": (status, [handle, c_int64_p, ctypes.c_int64]),
    "lt_tensor_set_u64": (status, [handle, c_int64_p, ctypes.c_uint64]),
    "lt_where": (status, [handle, handle, handle, handle_p]),
    "lt_clip": (status, [handle, handle, handle, handle_p]),
    "lt_where_into": (status, [handle, handle, handle, handle]),
    "lt_clip_into": (status, [handle, handle, handle, handle]),
    # context.h
    "lt_device_count": (status, [c_int_p]),
    "lt_device_string": (status, [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    "lt_device_int": (status, [ctypes.c_int, ctypes.c_int, c_int64_p]),
    "lt_context_create": (status, [ctypes.c_char_p, handle_p]),
    "lt_context_destroy": (None, [handle]),
    "lt_context_device": (ctypes.c_char_p, [handle]),
    "lt_context_set_num_threads": (status, [handle, ctypes.c_int]),
    "lt_context_num_threads": (ctypes.c_int, [handle]),
    "lt_context_synchronize": (status, [handle]),
    "lt_context_clear_cache": (status, [handle]),
    # tensor.h
    "lt_tensor_empty": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, handle_p]),
    "lt_tensor_zeros": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, handle_p]),
    "lt_tensor_full": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, ctypes.c_double,
                                handle_p]),
    "lt_tensor_from_host": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, c_int64_p,
                                     ctypes.c_void_p, handle_p]),
    "lt_tensor_wrap_host": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, c_int64_p,
                                     ctypes.c_void_p, release_fn, ctypes.c_void_p, handle_p]),
    "lt_tensor_destroy": (None, [handle]),
    "lt_tensor_to_host": (status, [handle, ctypes.c_void_p, ctypes.c_size_t]),
    "lt_tensor_get": (status, [handle, c_int64_p, ctypes.POINTER(ctypes.c_double)]),
    "lt_tensor_set": (status, [handle, c_int64_p, ctypes.c_double]),
    "lt_tensor_host_pointer": (status, [handle, ctypes.POINTER(ctypes.c_void_p)]),
    "lt_tensor_dtype": (ctypes.c_int, [handle]),
    "lt_tensor_rank": (ctypes.c_int, [handle]),
    "lt_tensor_shape": (c_int64_p, [handle]),
    "lt_tensor_strides": (c_int64_p, [handle]),
    "lt_tensor_offset": (ctypes.c_int64, [handle]),
    "lt_tensor_numel": (ctypes.c_int64, [handle]),
    "lt_tensor_nbytes": (ctypes.c_size_t, [handle]),
    "lt_tensor_is_contiguous": (ctypes.c_bool, [handle]),
    "lt_tensor_shares_storage": (ctypes.c_bool, [handle, handle]),
    "lt_tensor_context": (handle, [handle]),
    "lt_view_reshape": (status, [handle, ctypes.c_int, c_int64_p, handle_p]),
    "lt_view_permute": (status, [handle, c_int_p, handle_p]),
    "lt_view_transpose": (status, [handle, ctypes.c_int, ctypes.c_int, handle_p]),
    "lt_view_slice": (status, [handle, ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
                               ctypes.c_int64, handle_p]),
    "lt_view_select": (status, [handle, ctypes.c_int, ctypes.c_int64, handle_p]),
    "lt_view_broadcast_to": (status, [handle, ctypes.c_int, c_int64_p, handle_p]),
    "lt_view_unsqueeze": (status, [handle, ctypes.c_int, handle_p]),
    "lt_view_squeeze": (status, [handle, ctypes.c_int, handle_p]),
    "lt_view_flip": (status, [handle, ctypes.c_int, handle_p]),
    "lt_view_diagonal": (status, [handle, ctypes.c_int64, ctypes.c_int, ctypes.c_int, handle_p]),
    "lt_view_as_strided": (status, [handle, ctypes.c_int, c_int64_p, c_int64_p, ctypes.c_int64,
                                    handle_p]),
    "lt_tensor_contiguous": (status, [handle, ctypes.c_int, handle_p]),
    "lt_tensor_reshape": (status, [handle, ctypes.c_int, c_int64_p, handle_p]),
    "lt_tensor_copy_into": (status, [handle, handle]),
    "lt_tensor_to_context": (status, [handle, handle, handle_p]),
    "lt_npy_load": (status, [handle, ctypes.c_char_p, handle_p]),
    "lt_npy_load_buffer": (status, [handle, ctypes.c_void_p, ctypes.c_size_t, handle_p]),
    "lt_npy_save": (status, [handle, ctypes.c_char_p]),
    "lt_npy_save_with_flags": (status, [handle, ctypes.c_char_p, ctypes.c_uint32]),
    # hdf5.h (exported by every build; LT_ERR_UNSUPPORTED without HDF5)
    "lt_h5_available": (ctypes.c_bool, []),
    "lt_h5_open": (status, [ctypes.c_char_p, ctypes.c_int, handle_p]),
    "lt_h5_close": (status, [handle]),
    "lt_h5_discard": (status, [handle]),
    "lt_h5_list": (status, [handle, ctypes.c_char_p, ctypes.c_size_t, c_size_t_p]),
    "lt_h5_stat": (status, [handle, ctypes.c_char_p, c_int_p, c_int_p, c_int_p, c_int64_p,
                            c_int64_p, ctypes.c_char_p, ctypes.c_size_t]),
    "lt_h5_read": (status, [handle, ctypes.c_char_p, handle, ctypes.c_int, handle_p]),
    "lt_h5_read_slab": (status, [handle, ctypes.c_char_p, ctypes.c_int, c_int64_p, c_int64_p,
                                 c_int64_p, handle, ctypes.c_int, handle_p]),
    "lt_h5_read_into": (status, [handle, ctypes.c_char_p, ctypes.c_int, c_int64_p, c_int64_p,
                                 c_int64_p, handle]),
    "lt_h5_write": (status, [handle, ctypes.c_char_p, handle, c_int64_p, ctypes.c_int,
                             ctypes.c_uint32]),
    "lt_h5_write_slab": (status, [handle, ctypes.c_char_p, ctypes.c_int, c_int64_p, c_int64_p,
                                  c_int64_p, handle]),
    "lt_h5_attr_set_double": (status, [handle, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_double]),
    "lt_h5_attr_set_int64": (status, [handle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int64]),
    "lt_h5_attr_set_string": (status, [handle, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_char_p]),
    "lt_h5_attr_get_double": (status, [handle, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.POINTER(ctypes.c_double)]),
    "lt_h5_attr_get_int64": (status, [handle, ctypes.c_char_p, ctypes.c_char_p, c_int64_p]),
    "lt_h5_attr_get_string": (status, [handle, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.c_size_t, c_size_t_p]),
    "lt_h5_attr_list": (status, [handle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t,
                                 c_size_t_p]),
    # ops.h
    "lt_plan_options_create": (status, [handle_p]),
    "lt_plan_options_destroy": (None, [handle]),
    "lt_plan_options_set_compute_dtype": (status, [handle, ctypes.c_int]),
    "lt_plan_options_set_path": (status, [handle, ctypes.c_int]),
    "lt_plan_options_set_memory_limit": (status, [handle, ctypes.c_int64]),
    "lt_plan_options_set_output_dtype": (status, [handle, ctypes.c_int]),
    "lt_plan_options_set_lowp_compute": (status, [handle, ctypes.c_int]),
    "lt_plan_execute": (status, [handle, handle_p, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                 ctypes.c_int, handle]),
    "lt_plan_create_output": (status, [handle, handle_p]),
    "lt_plan_workspace_size": (status, [handle, ctypes.POINTER(ctypes.c_size_t)]),
    "lt_plan_describe": (ctypes.c_char_p, [handle]),
    "lt_plan_destroy": (None, [handle]),
    "lt_binary": (status, [ctypes.c_int, handle, handle, handle_p]),
    "lt_unary": (status, [ctypes.c_int, handle, handle_p]),
    "lt_reduce": (status, [ctypes.c_int, handle, ctypes.c_int, c_int_p, ctypes.c_bool, handle_p]),
    "lt_argmax": (status, [handle, ctypes.c_int, handle_p]),
    "lt_argmin": (status, [handle, ctypes.c_int, handle_p]),
    "lt_permute": (status, [handle, c_int_p, handle_p]),
    # einsum.h
    "lt_plan_einsum": (status, [ctypes.c_char_p, ctypes.c_int, handle_p, handle, handle,
                                handle_p]),
    "lt_einsum": (status, [ctypes.c_char_p, ctypes.c_int, handle_p, handle, handle_p]),
    "lt_einsum_into": (status, [ctypes.c_char_p, ctypes.c_int, handle_p, handle, handle]),
    # paths (issue 22): budget, objective, tree size, memory figures
    "lt_plan_options_set_path_budget": (status, [handle, ctypes.c_int, ctypes.c_double]),
    "lt_plan_options_set_path_cost": (status, [handle, ctypes.c_double]),
    "lt_plan_einsum_n_steps": (status, [handle, ctypes.POINTER(ctypes.c_int64)]),
    "lt_plan_einsum_step": (status, [handle, ctypes.c_int64, ctypes.POINTER(ctypes.c_int64),
                                     ctypes.POINTER(ctypes.c_int64),
                                     ctypes.POINTER(ctypes.c_double),
                                     ctypes.POINTER(ctypes.c_double)]),
    "lt_context_memory": (status, [handle, ctypes.POINTER(ctypes.c_int64),
                                   ctypes.POINTER(ctypes.c_int64)]),
    "lt_context_reset_peak_memory": (status, [handle]),
    # dlpack.h (issue 20): managed tensors pass as plain pointers.
    "lt_tensor_from_dlpack": (status, [handle, ctypes.c_void_p, ctypes.c_uint32, handle_p]),
    "lt_tensor_from_dlpack_legacy": (status, [handle, ctypes.c_void_p, ctypes.c_uint32,
                                              handle_p]),
    "lt_tensor_to_dlpack": (status, [handle, ctypes.c_uint32, handle_p]),
    "lt_tensor_to_dlpack_legacy": (status, [handle, ctypes.c_uint32, handle_p]),
    # einsum's sublist form past 52 labels (issue 20).
    "lt_einsum_modes": (status, [ctypes.c_int, handle_p, ctypes.POINTER(c_int32_p), ctypes.c_int,
                                 c_int32_p, handle, handle_p]),
    # random.h and stats.h (issue 18 C)
    "lt_rng_create": (status, [ctypes.c_uint64, ctypes.c_uint64, handle_p]),
    "lt_rng_destroy": (None, [handle]),
    "lt_rng_get_offset": (status, [handle, ctypes.POINTER(ctypes.c_uint64)]),
    "lt_rng_set_offset": (status, [handle, ctypes.c_uint64]),
    "lt_rng_uniform": (status, [handle, handle, ctypes.c_double, ctypes.c_double]),
    "lt_rng_normal": (status, [handle, handle, ctypes.c_double, ctypes.c_double]),
    "lt_rng_integers": (status, [handle, handle, ctypes.c_int64, ctypes.c_int64]),
    "lt_rng_bernoulli": (status, [handle, handle, ctypes.c_double]),
    "lt_rng_permutation": (status, [handle, handle]),
    "lt_softmax": (status, [handle, ctypes.c_int, c_int_p, handle_p]),
    "lt_log_softmax": (status, [handle, ctypes.c_int, c_int_p, handle_p]),
    "lt_logsumexp": (status, [handle, ctypes.c_int, c_int_p, ctypes.c_bool, handle_p]),
    "lt_var": (status, [handle, ctypes.c_int, c_int_p, ctypes.c_double, ctypes.c_bool, handle_p]),
    "lt_std": (status, [handle, ctypes.c_int, c_int_p, ctypes.c_double, ctypes.c_bool, handle_p]),
    "lt_cumsum": (status, [handle, ctypes.c_int, handle_p]),
    "lt_cumprod": (status, [handle, ctypes.c_int, handle_p]),
    # autograd.h (issue 19)
    "lt_tape_create": (status, [handle, handle_p]),
    "lt_tape_destroy": (None, [handle]),
    "lt_tape_requires_grad": (status, [handle, handle, ctypes.c_bool]),
    "lt_tape_is_tracked": (status, [handle, handle, ctypes.POINTER(ctypes.c_bool)]),
    "lt_tape_set_recording": (status, [handle, ctypes.c_bool, ctypes.POINTER(ctypes.c_bool)]),
    "lt_tape_detach": (status, [handle, handle, handle_p]),
    "lt_tape_grad": (status, [handle, handle, handle_p]),
    "lt_tape_set_grad": (status, [handle, handle, handle]),
    "lt_tape_zero_grads": (status, [handle]),
    "lt_tape_backward": (status, [handle, handle, handle, ctypes.c_uint32]),
    "lt_tape_clear": (status, [handle]),
    "lt_tape_saved_count": (status, [handle, c_int64_p, ctypes.POINTER(ctypes.c_size_t)]),
    "lt_ad_unary": (status, [handle, ctypes.c_int, handle, handle_p]),
    "lt_ad_binary": (status, [handle, ctypes.c_int, handle, handle, handle_p]),
    "lt_ad_trinary": (status, [handle, ctypes.c_int, ctypes.c_int, handle, handle, handle,
                               ctypes.POINTER(ctypes.c_double), handle_p]),
    "lt_ad_reduce": (status, [handle, ctypes.c_int, handle, ctypes.c_int, c_int_p, ctypes.c_bool,
                              handle_p]),
    "lt_ad_einsum": (status, [handle, ctypes.c_char_p, ctypes.c_int, handle_p, handle_p]),
    "lt_ad_einsum_modes": (status, [handle, ctypes.c_int, handle_p, ctypes.POINTER(c_int32_p),
                                    ctypes.c_int, c_int32_p, handle_p]),
    "lt_ad_contiguous": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_reshape": (status, [handle, handle, ctypes.c_int, c_int64_p, handle_p]),
    "lt_ad_permute": (status, [handle, handle, c_int_p, handle_p]),
    "lt_ad_slice": (status, [handle, handle, ctypes.c_int, ctypes.c_int64, ctypes.c_int64,
                             ctypes.c_int64, handle_p]),
    "lt_ad_select": (status, [handle, handle, ctypes.c_int, ctypes.c_int64, handle_p]),
    "lt_ad_broadcast_to": (status, [handle, handle, ctypes.c_int, c_int64_p, handle_p]),
    "lt_ad_squeeze": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_unsqueeze": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_flip": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_diagonal": (status, [handle, handle, ctypes.c_int64, ctypes.c_int, ctypes.c_int,
                                handle_p]),
    "lt_ad_as_strided": (status, [handle, handle, ctypes.c_int, c_int64_p, c_int64_p,
                                  ctypes.c_int64, handle_p]),
    # issue 19 (grad branch): the vocabulary ops on the tape, and forgetting dead results
    "lt_tape_forget": (status, [handle, handle]),
    "lt_ad_softmax": (status, [handle, handle, ctypes.c_int, c_int_p, handle_p]),
    "lt_ad_log_softmax": (status, [handle, handle, ctypes.c_int, c_int_p, handle_p]),
    "lt_ad_logsumexp": (status, [handle, handle, ctypes.c_int, c_int_p, ctypes.c_bool, handle_p]),
    "lt_ad_var": (status, [handle, handle, ctypes.c_int, c_int_p, ctypes.c_double, ctypes.c_bool,
                           handle_p]),
    "lt_ad_std": (status, [handle, handle, ctypes.c_int, c_int_p, ctypes.c_double, ctypes.c_bool,
                           handle_p]),
    "lt_ad_cumsum": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_cumprod": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_take": (status, [handle, handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_index_select": (status, [handle, handle, ctypes.c_int, handle, handle_p]),
    "lt_ad_take_along_axis": (status, [handle, handle, handle, ctypes.c_int, handle_p]),
    "lt_ad_scatter_add": (status, [handle, handle, ctypes.c_int, handle, handle, handle_p]),
    "lt_ad_where": (status, [handle, handle, handle, handle, handle_p]),
    "lt_ad_clip": (status, [handle, handle, handle, handle, handle_p]),
    "lt_ad_concatenate": (status, [handle, ctypes.c_int, handle_p, ctypes.c_int, handle_p]),
    "lt_ad_stack": (status, [handle, ctypes.c_int, handle_p, ctypes.c_int, handle_p]),
    "lt_ad_split": (status, [handle, handle, ctypes.c_int, ctypes.c_int, c_int64_p, handle_p]),
    "lt_optim_create": (status, [handle, ctypes.c_int, ctypes.c_int, handle_p, handle_p]),
    "lt_optim_set": (status, [handle, ctypes.c_int, ctypes.c_double]),
    "lt_optim_get": (status, [handle, ctypes.c_int, ctypes.POINTER(ctypes.c_double)]),
    "lt_optim_step": (status, [handle]),
    "lt_optim_zero_grad": (status, [handle]),
    "lt_optim_destroy": (None, [handle]),
}

# index.h (issue 18 B: gather/scatter, masks, joining, creation, sorting)
_SIGNATURES.update({
    "lt_take": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_take_along_axis": (status, [handle, handle, ctypes.c_int, handle_p]),
    "lt_scatter_add": (status, [handle, ctypes.c_int, handle, handle]),
    "lt_mask_select": (status, [handle, handle, handle_p]),
    "lt_argwhere": (status, [handle, handle_p]),
    "lt_concatenate": (status, [ctypes.c_int, handle_p, ctypes.c_int, handle_p]),
    "lt_stack": (status, [ctypes.c_int, handle_p, ctypes.c_int, handle_p]),
    "lt_split": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, handle_p]),
    "lt_arange": (status, [handle, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                           ctypes.c_double, handle_p]),
    "lt_linspace": (status, [handle, ctypes.c_int, ctypes.c_double, ctypes.c_double,
                             ctypes.c_int64, ctypes.c_bool, handle_p]),
    "lt_eye": (status, [handle, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                        handle_p]),
    "lt_ones": (status, [handle, ctypes.c_int, ctypes.c_int, c_int64_p, handle_p]),
    "lt_full_like": (status, [handle, ctypes.c_int, ctypes.c_double, handle_p]),
    "lt_ones_like": (status, [handle, ctypes.c_int, handle_p]),
    "lt_zeros_like": (status, [handle, ctypes.c_int, handle_p]),
    "lt_empty_like": (status, [handle, ctypes.c_int, handle_p]),
    "lt_sort": (status, [handle, ctypes.c_int, ctypes.c_bool, handle_p]),
    "lt_argsort": (status, [handle, ctypes.c_int, ctypes.c_bool, handle_p]),
    "lt_topk": (status, [handle, ctypes.c_int64, ctypes.c_int, ctypes.c_bool, handle_p,
                         handle_p]),
})

# issue 24 (branch mpi): a range of a sliced einsum plan's slices, for distributed workers.
_SIGNATURES.update({
    "lt_plan_execute_slices": (status, [handle, ctypes.c_int64, ctypes.c_int64, handle_p,
                                        ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                        ctypes.c_int, handle]),
})

# Exported functions (tests/abi_symbols.txt) the binding deliberately does not declare, each with
# what it uses instead.
# tests/python/test_abi.py requires every exported function in _SIGNATURES or here.
UNBOUND = {
    # issue 24 (branch mpi): for C libraries layered on libtensor; Python raises its own errors.
    "lt_set_last_error": "LibtensorError",
    # paths (issue 22): array-of-pairs parameters; the Python einsum_path/explicit-path front
    # end (branch python) binds these with its own argument handling.
    "lt_plan_options_set_explicit_path": "einsum(optimize=['einsum_path', ...]): einsum.py "
                                         "binds it (int64_t (*)[2] pairs)",
    "lt_plan_options_set_path_seed": "default seed",
    "lt_plan_einsum_slicing": "lt_plan_describe",
    "lt_einsum_find_path": "einsum_path (branch python)",
    # lt_binary(op, ...) covers them.
    "lt_add": "lt_binary",
    "lt_sub": "lt_binary",
    "lt_mul": "lt_binary",
    "lt_div": "lt_binary",
    # Scalar half/bfloat16 bit conversions: NumPy converts float16; bfloat16 goes through
    # lt_tensor_contiguous.
    "lt_f32_to_f16": "numpy / lt_tensor_contiguous",
    "lt_f16_to_f32": "numpy / lt_tensor_contiguous",
    "lt_f32_to_bf16": "lt_tensor_contiguous",
    "lt_bf16_to_f32": "lt_tensor_contiguous",
    # Host allocator hooks: Python has no allocator to hand over; memory comes from NumPy.
    "lt_context_create_with_allocator": "lt_context_create",
    # The mode-label (cuTENSOR style) plan API: the binding offers NumPy-style functions and
    # einsum strings, which the library lowers to these plans itself.
    "lt_plan_permutation": "lt_permute / einsum",
    "lt_plan_binary": "lt_binary",
    "lt_plan_trinary": "two lt_binary calls",
    "lt_plan_reduction": "lt_reduce",
    "lt_plan_contraction": "lt_plan_einsum",
    "lt_plan_options_set_unary": "lt_unary",
    "lt_plan_einsum_modes": "lt_plan_einsum (string labels)",
    # index.h: the binding calls the one-shots; the plans are the C API's.
    "lt_plan_take": "lt_take",
    "lt_plan_take_along_axis": "lt_take_along_axis",
    "lt_plan_scatter_add": "lt_scatter_add",
    "lt_plan_sort": "lt_sort / lt_argsort / lt_topk",
    "lt_index_select": "lt_take with a 1-D index",
    # Row plans over mode labels (issue 18 C): the NumPy-style one-shot calls cover them.
    "lt_plan_softmax": "lt_softmax / lt_log_softmax",
    "lt_plan_logsumexp": "lt_logsumexp",
    "lt_plan_variance": "lt_var / lt_std",
    "lt_plan_scan": "lt_cumsum / lt_cumprod",
}


def _candidates():
    env = os.environ.get("LIBTENSOR_PATH")
    if env:
        if os.path.isdir(env):
            yield from sorted(glob.glob(os.path.join(env, "libtensor.so*")))
        else:
            yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, "libtensor.so*")))
    # A build tree at the repository root: bindings/python/libtensor -> ../../../build/src.
    # Only the plain build: sanitizer builds (build-asan, build-tsan) cannot load into python.
    root = os.path.abspath(os.path.join(here, "..", "..", ".."))
    yield os.path.join(root, "build", "src", "libtensor.so")
    # Installed: PREFIX/lib/python3/dist-packages/libtensor -> PREFIX/lib/libtensor.so.0
    yield from sorted(glob.glob(os.path.join(root, "libtensor.so.*")))
    found = ctypes.util.find_library("tensor")
    if found:
        yield found
    yield "libtensor.so.0"  # the dynamic loader's default folders, without ldconfig's cache


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as exc:
            errors.append(f"{path}: {exc}")
    raise ImportError("libtensor: cannot load libtensor.so (set LIBTENSOR_PATH to the library "
                      "file or its folder)" + ("; tried " + "; ".join(errors) if errors else ""))


# ctypes truncates Python integers silently (2**64 + 5 would reach C as 5): every integer
# argument is checked against its C type's range first.
_INT_RANGES = {
    ctypes.c_int: (-2**31, 2**31 - 1),
    ctypes.c_int32: (-2**31, 2**31 - 1),
    ctypes.c_int64: (-2**63, 2**63 - 1),
    ctypes.c_size_t: (0, 2**64 - 1),
}


def as_int(value, bits=64, what="value"):
    """`value` as a Python int that fits a signed C integer of `bits` bits, else TypeError
    (not an integer: floats, tuples, strings) or OverflowError."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"libtensor: {what} must be an integer, not "
                        f"{type(value).__name__}") from None
    if not -2**(bits - 1) <= v < 2**(bits - 1):
        raise OverflowError(f"libtensor: {what} {v} does not fit in a {bits}-bit integer")
    return v


def cstr(value, what):
    """`value` (a str) as NUL-terminated UTF-8 bytes; TypeError for other types, ValueError for an
    embedded NUL, which would silently end the string in C."""
    if not isinstance(value, str):
        raise TypeError(f"libtensor: {what} must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"libtensor: {what} contains a NUL character")
    return value.encode()


def cpath(value, what="path"):
    """A file name as the bytes the C library opens: str, bytes and os.PathLike all go through
    os.fsencode (so names that are not valid UTF-8 survive); TypeError for other types,
    ValueError for an embedded NUL, which would silently cut the name short in C."""
    try:
        raw = os.fsencode(os.fspath(value))
    except TypeError:
        raise TypeError(f"libtensor: {what} must be str, bytes or os.PathLike, not "
                        f"{type(value).__name__}") from None
    if b"\0" in raw:
        raise ValueError(f"libtensor: {what} {os.fsdecode(raw)!r} contains a NUL character")
    return raw


def _range_checked(name, f, argtypes):
    checks = tuple((i, *_INT_RANGES[t]) for i, t in enumerate(argtypes) if t in _INT_RANGES)
    if not checks:
        return f

    def convert(args):
        args = list(args)
        for i, lo, hi in checks:
            v = args[i]
            if isinstance(v, ctypes._SimpleCData):
                continue
            try:
                v = operator.index(v)
            except TypeError:
                raise TypeError(f"libtensor: {name}: argument {i + 1} must be an integer, not "
                                f"{type(args[i]).__name__}") from None
            if not lo <= v <= hi:
                raise OverflowError(f"libtensor: {name}: argument {i + 1} ({v}) is outside "
                                    f"[{lo}, {hi}]")
            args[i] = v
        return f(*args)

    def call(*args):
        for i, lo, hi in checks:  # the common case, plain ints in range, stays cheap
            v = args[i]
            if type(v) is not int or not lo <= v <= hi:
                return convert(args)
        return f(*args)
    call.__name__ = name
    return call


lib, path = _load()
# A tape is not thread-safe in C (one per thread), but every thread of a Python process shares
# its context's tape: calls that read or write a tape keep the GIL (ctypes.PyDLL), which makes
# the GIL the tape's lock. Plain calls release it as usual.
_TAPE_CALLS = ("lt_ad_", "lt_tape_", "lt_optim_")
_gil_lib = ctypes.PyDLL(path)
# ... and a lock of their own: a tape call can run Python (the release callback of a tensor over
# a NumPy array, when the tape frees it), where the interpreter may switch threads and another
# thread's tape call would enter the tape mid-call (six training threads crashed so).
_tape_lock = threading.RLock()


def _locked(f):
    def call(*args):
        with _tape_lock:
            return f(*args)
    return call


_bound = {}
for _name, (_res, _args) in _SIGNATURES.items():
    _tape = _name.startswith(_TAPE_CALLS)
    _f = getattr(_gil_lib if _tape else lib, _name, None)
    if _f is not None:
        _f.restype = _res
        _f.argtypes = _args
        _call = _range_checked(_name, _f, _args)
        _bound[_name] = _locked(_call) if _tape else _call


def has(name):
    """True if the loaded library exports the function `name`."""
    return name in _bound


def fn(name):
    """The bound C function `name`; NotImplementedError if this library lacks it."""
    f = _bound.get(name)
    if f is None:
        raise NotImplementedError(f"libtensor: {name} is not available in {path}")
    return f


def int64_array(values, what="value"):
    values = [as_int(v, 64, what) for v in values]
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def int_array(values, what="value"):
    values = [as_int(v, 32, what) for v in values]
    return (ctypes.c_int * max(len(values), 1))(*values)


def handle_array(handles):
    handles = list(handles)
    return (ctypes.c_void_p * max(len(handles), 1))(*handles)
