"""tf2onnx (the optional tf venv): Keras models through tf.function, a CNN (NHWC) and an LSTM/GRU."""
from __future__ import annotations

from . import SEED
from .kit import seed_all, versions
from .registry import target


def _tf_seed():
    import numpy as np
    import tensorflow as tf

    seed_all()
    tf.random.set_seed(SEED)
    tf.keras.utils.set_random_seed(SEED)
    return np, tf


@target("tf2onnx-cnn", "cnn", "tf2onnx", "Keras CNN (NHWC) via tf.function: Transposes around Conv, dynamic batch",
        group="tf")
def t_tf_cnn(ctx):
    np, tf = _tf_seed()
    import tf2onnx

    L = tf.keras.layers
    inp = tf.keras.Input(shape=(32, 32, 3), name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu")(inp)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D()(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu6")(x)
    x = L.Conv2D(16, 1)(x)
    x = L.GlobalAveragePooling2D()(x)
    out = L.Dense(10, activation="softmax")(x)
    model = tf.keras.Model(inp, out)
    spec = (tf.TensorSpec((None, 32, 32, 3), tf.float32, name="image"),)

    @tf.function(input_signature=spec)
    def f(image):
        return {"probs": model(image, training=False)}

    tf2onnx.convert.from_function(f, input_signature=spec, opset=17, output_path=ctx.path("tf2onnx_cnn.onnx"))
    ctx.file("tf2onnx_cnn.onnx")
    ctx.exporter("tf2onnx.convert.from_function (" + versions("tf2onnx", "tensorflow-cpu", "keras") + ")")


@target("tf2onnx-lstm", "rnn", "tf2onnx", "Keras Embedding + LSTM via tf.function: while loop -> LSTM or Loop",
        group="tf")
def t_tf_lstm(ctx):
    np, tf = _tf_seed()
    import tf2onnx

    L = tf.keras.layers
    inp = tf.keras.Input(shape=(None,), dtype="int32", name="tokens")
    x = L.Embedding(64, 16)(inp)
    x = L.LSTM(16, return_sequences=True)(x)
    x = L.GRU(8)(x)
    model = tf.keras.Model(inp, L.Dense(3)(x))
    spec = (tf.TensorSpec((None, None), tf.int32, name="tokens"),)

    @tf.function(input_signature=spec)
    def f(tokens):
        return {"logits": model(tokens, training=False)}

    tf2onnx.convert.from_function(f, input_signature=spec, opset=17, output_path=ctx.path("tf2onnx_lstm.onnx"))
    ctx.file("tf2onnx_lstm.onnx")
    ctx.exporter("tf2onnx.convert.from_function (" + versions("tf2onnx", "tensorflow-cpu", "keras") + ")")
