"""The workloadmap.v1 API, generated from proto/workloadmap/v1 at build time.

service_pb2 holds the request and response messages and workload_pb2 the
resolved-workload model; service_pb2_grpc holds WorkloadMapStub.
"""
