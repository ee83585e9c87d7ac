# SPDX-License-Identifier: MIT
"""The C header's enums and constants, as plain ints (the fast path of the ctypes calls).

One table per C enum, named after it in `ENUMS`; every table holds all of its enum's values,
also those the binding does not use. tests/python/test_abi.py parses include/ and fails when
a value here differs from the header, or when the header gains a value this file lacks.
Imports nothing: the bottom of the package (after `_lib`, which needs no enum).
"""

# lt_status: LT_STATUS_TABLE in include/tensor/base.h, (name, value, default message).
STATUS_TABLE = (
    ("LT_OK", 0, "success"),
    ("LT_ERR_INVALID_ARGUMENT", -1, "invalid argument"),
    ("LT_ERR_NULL_POINTER", -2, "null pointer"),
    ("LT_ERR_OUT_OF_MEMORY", -3, "out of memory"),
    ("LT_ERR_SHAPE_MISMATCH", -4, "shape mismatch"),
    ("LT_ERR_OUT_OF_RANGE", -5, "index or axis out of range"),
    ("LT_ERR_OVERFLOW", -6, "size arithmetic overflows"),
    ("LT_ERR_DTYPE", -7, "unsupported or mismatched dtype"),
    ("LT_ERR_NOT_VIEWABLE", -8, "layout cannot be expressed as a view"),
    ("LT_ERR_PARSE", -9, "malformed expression"),
    ("LT_ERR_IO", -10, "input/output error"),
    ("LT_ERR_FORMAT", -11, "malformed file"),
    ("LT_ERR_UNSUPPORTED", -12, "unsupported operation"),
    ("LT_ERR_DEVICE", -13, "device error"),
    ("LT_ERR_NO_DEVICE", -14, "no such device"),
    ("LT_ERR_ALIASING", -15, "output overlaps an input"),
    ("LT_ERR_CONTEXT_MISMATCH", -16, "tensors belong to different contexts"),
    ("LT_ERR_LAYOUT_MISMATCH", -17, "tensor layout differs from the plan's"),
    ("LT_ERR_BUILD", -18, "device program build failed"),
    ("LT_ERR_INTERNAL", -19, "internal error"),
    ("LT_ERR_INVALID_HANDLE", -20, "invalid or destroyed handle"),
)
STATUS = {name: value for name, value, _ in STATUS_TABLE}
STATUS_NAME = {value: name for name, value, _ in STATUS_TABLE}

# lt_dtype (base.h)
DTYPE = {"LT_DTYPE_INVALID": 0, "LT_F16": 1, "LT_BF16": 2, "LT_F32": 3, "LT_F64": 4,
         "LT_I64": 5,
         # issue 18 A
         "LT_I8": 6, "LT_I16": 7, "LT_I32": 8, "LT_U8": 9, "LT_U16": 10, "LT_U32": 11,
         "LT_U64": 12, "LT_BOOL": 13}

# lt_device_prop (context.h)
DEVICE_PROP = {"LT_DEVICE_ID": 0, "LT_DEVICE_NAME": 1, "LT_DEVICE_VENDOR": 2,
               "LT_DEVICE_TYPE": 3, "LT_DEVICE_GLOBAL_MEMORY": 4, "LT_DEVICE_COMPUTE_UNITS": 5,
               "LT_DEVICE_FP64": 6, "LT_DEVICE_FP16": 7}

# lt_unary_op, lt_binary_op, lt_reduce_op, lt_path_algo (ops.h)
UNARY_OP = {"LT_UNARY_IDENTITY": 0, "LT_UNARY_NEG": 1, "LT_UNARY_ABS": 2, "LT_UNARY_SQRT": 3,
            "LT_UNARY_EXP": 4, "LT_UNARY_LOG": 5, "LT_UNARY_SIN": 6, "LT_UNARY_COS": 7,
            "LT_UNARY_TANH": 8, "LT_UNARY_SIGMOID": 9, "LT_UNARY_RELU": 10,
            "LT_UNARY_RECIPROCAL": 11, "LT_UNARY_SQUARE": 12,
            # issue 18 A
            "LT_UNARY_LOG1P": 13, "LT_UNARY_EXPM1": 14, "LT_UNARY_FLOOR": 15, "LT_UNARY_CEIL": 16,
            "LT_UNARY_ROUND": 17, "LT_UNARY_TRUNC": 18, "LT_UNARY_SIGN": 19, "LT_UNARY_ERF": 20,
            "LT_UNARY_GELU": 21, "LT_UNARY_SILU": 22, "LT_UNARY_SOFTPLUS": 23,
            "LT_UNARY_RSQRT": 24, "LT_UNARY_NOT": 25, "LT_UNARY_INVERT": 26,
            "LT_UNARY_ISNAN": 27, "LT_UNARY_ISINF": 28, "LT_UNARY_ISFINITE": 29,
            # issue 20 B
            "LT_UNARY_TAN": 30, "LT_UNARY_ASIN": 31, "LT_UNARY_ACOS": 32, "LT_UNARY_ATAN": 33,
            "LT_UNARY_SINH": 34, "LT_UNARY_COSH": 35, "LT_UNARY_ASINH": 36,
            "LT_UNARY_ACOSH": 37, "LT_UNARY_ATANH": 38, "LT_UNARY_LOG2": 39,
            "LT_UNARY_LOG10": 40, "LT_UNARY_SIGNBIT": 41}
BINARY_OP = {"LT_BINARY_ADD": 0, "LT_BINARY_MUL": 1, "LT_BINARY_MIN": 2, "LT_BINARY_MAX": 3,
             "LT_BINARY_SUB": 4, "LT_BINARY_DIV": 5, "LT_BINARY_POW": 6,
             # issue 18 A
             "LT_BINARY_EQ": 7, "LT_BINARY_NE": 8, "LT_BINARY_LT": 9, "LT_BINARY_LE": 10,
             "LT_BINARY_GT": 11, "LT_BINARY_GE": 12, "LT_BINARY_LOGICAL_AND": 13,
             "LT_BINARY_LOGICAL_OR": 14, "LT_BINARY_LOGICAL_XOR": 15,
             "LT_BINARY_BITWISE_AND": 16, "LT_BINARY_BITWISE_OR": 17,
             "LT_BINARY_BITWISE_XOR": 18, "LT_BINARY_SHIFT_LEFT": 19,
             "LT_BINARY_SHIFT_RIGHT": 20, "LT_BINARY_FLOOR_DIVIDE": 21,
             "LT_BINARY_REMAINDER": 22, "LT_BINARY_FMOD": 23, "LT_BINARY_ATAN2": 24,
             "LT_BINARY_HYPOT": 25, "LT_BINARY_WHERE": 26,
             # issue 20 B
             "LT_BINARY_COPYSIGN": 27, "LT_BINARY_LOGADDEXP": 28}
REDUCE_OP = {"LT_REDUCE_SUM": 0, "LT_REDUCE_PROD": 1, "LT_REDUCE_MIN": 2, "LT_REDUCE_MAX": 3,
             "LT_REDUCE_MEAN": 4, "LT_REDUCE_SUMSQ": 5, "LT_REDUCE_MAXABS": 6,
             "LT_REDUCE_ARGMAX": 7, "LT_REDUCE_ARGMIN": 8}
PATH_ALGO = {"LT_PATH_AUTO": 0, "LT_PATH_GREEDY": 1, "LT_PATH_OPTIMAL": 2, "LT_PATH_NONE": 3,
             "LT_PATH_PARTITION": 4}
LOWP_COMPUTE = {"LT_LOWP_FAST": 0, "LT_LOWP_F32": 1}
SCAN_OP = {"LT_SCAN_SUM": 0, "LT_SCAN_PROD": 1}  # stats.h
# lt_save_flags (tensor.h)
SAVE_FLAGS = {"LT_SAVE_DEFAULT": 0, "LT_SAVE_FSYNC": 1}
# lt_sort_flags (index.h)
SORT_FLAGS = {"LT_SORT_ASCENDING": 0, "LT_SORT_DESCENDING": 1, "LT_SORT_INDICES": 2}

# lt_dlpack_flags and the DLPack enums it declares (dlpack.h, issue 20)
DLPACK_FLAGS = {"LT_DLPACK_DEFAULT": 0, "LT_DLPACK_COPY": 1, "LT_DLPACK_READ_ONLY": 2}
DL_DEVICE_TYPE = {"kDLCPU": 1, "kDLCUDA": 2, "kDLCUDAHost": 3, "kDLOpenCL": 4, "kDLVulkan": 7,
                  "kDLMetal": 8, "kDLVPI": 9, "kDLROCM": 10, "kDLROCMHost": 11, "kDLExtDev": 12,
                  "kDLCUDAManaged": 13, "kDLOneAPI": 14, "kDLWebGPU": 15, "kDLHexagon": 16,
                  "kDLMAIA": 17}
DL_DATA_TYPE_CODE = {"kDLInt": 0, "kDLUInt": 1, "kDLFloat": 2, "kDLOpaqueHandle": 3,
                     "kDLBfloat": 4, "kDLComplex": 5, "kDLBool": 6}
# lt_backward_flags, lt_optim_kind, lt_optim_param (autograd.h)
BACKWARD_FLAGS = {"LT_BACKWARD_DEFAULT": 0, "LT_BACKWARD_RETAIN_GRAPH": 1}
OPTIM_KIND = {"LT_OPTIM_SGD": 0, "LT_OPTIM_ADAM": 1, "LT_OPTIM_ADAMW": 2}
OPTIM_PARAM = {"LT_OPTIM_LR": 0, "LT_OPTIM_MOMENTUM": 1, "LT_OPTIM_DAMPENING": 2,
               "LT_OPTIM_NESTEROV": 3, "LT_OPTIM_WEIGHT_DECAY": 4, "LT_OPTIM_BETA1": 5,
               "LT_OPTIM_BETA2": 6, "LT_OPTIM_EPS": 7}

# lt_h5_mode, lt_h5_write_flags, lt_h5_kind (hdf5.h)
H5_MODE = {"LT_H5_READ": 0, "LT_H5_READ_WRITE": 1, "LT_H5_CREATE": 2}
H5_WRITE_FLAGS = {"LT_H5_WRITE_DEFAULT": 0, "LT_H5_SHUFFLE": 1, "LT_H5_REPLACE": 2}
H5_KIND = {"LT_H5_OTHER": 0, "LT_H5_GROUP": 1, "LT_H5_DATASET": 2}

# C typedef name -> table.
ENUMS = {"lt_status": STATUS, "lt_dtype": DTYPE, "lt_device_prop": DEVICE_PROP,
         "lt_unary_op": UNARY_OP, "lt_binary_op": BINARY_OP, "lt_reduce_op": REDUCE_OP,
         "lt_path_algo": PATH_ALGO, "lt_save_flags": SAVE_FLAGS,
         "lt_dlpack_flags": DLPACK_FLAGS, "DLDeviceType": DL_DEVICE_TYPE,
         "DLDataTypeCode": DL_DATA_TYPE_CODE}
ENUMS.update({"lt_sort_flags": SORT_FLAGS})
ENUMS.update({"lt_h5_mode": H5_MODE, "lt_h5_write_flags": H5_WRITE_FLAGS, "lt_h5_kind": H5_KIND})
ENUMS.update({"lt_scan_op": SCAN_OP})  # issue 18 C
ENUMS.update({"lt_backward_flags": BACKWARD_FLAGS, "lt_optim_kind": OPTIM_KIND,
              "lt_optim_param": OPTIM_PARAM})  # issue 19
ENUMS.update({"lt_lowp_compute": LOWP_COMPUTE})  # issue 21 (low precision)

# The header's integer #defines the binding uses.
DEFINES = {"LT_SLICE_DEFAULT": -2 ** 63, "LT_ALL_AXES": -1000}

# Every name above as a module constant: enums.LT_F32, enums.LT_ERR_CONTEXT_MISMATCH, ...
for _table in (*ENUMS.values(), DEFINES):
    globals().update(_table)
del _table
