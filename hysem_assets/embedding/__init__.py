"""The embedding engine: the packaged MiniLM, its ONNX and NumPy encoders, the vector cache, MMR."""
