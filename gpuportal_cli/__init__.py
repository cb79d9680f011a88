"""`gpuportal`: the GPU portal from the command line, over the hub's and the portal's REST APIs."""
